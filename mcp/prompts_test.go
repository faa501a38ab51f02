package mcp_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
)

// promptServer is a server with prompts: review (an argument file,
// required; its text has a terminal escape), huge (over mcp.MaxPrompt)
// and mixed (an assistant's message, a resource, an image).
func promptServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "prompts", Version: "1"}, nil)
	srv.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review\na file\x1b[2J", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}, {Name: "focus"}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Review " + req.Params.Arguments["file"] + "\x1b]0;owned\x07"}}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "huge"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: strings.Repeat("x", mcp.MaxPrompt+1)}}}}, nil
	})
	srv.AddPrompt(&sdk.Prompt{Name: "mixed"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			{Role: "user", Content: &sdk.TextContent{Text: "Look at this."}},
			{Role: "assistant", Content: &sdk.TextContent{Text: "I will."}},
			{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", Text: "a's text"}}},
			{Role: "user", Content: &sdk.ImageContent{MIMEType: "image/png", Data: []byte("png")}},
		}}, nil
	})
	return srv
}

// TestServersPrompts: the prompts of the connected servers that declare
// some are listed, each word the server's on one line and bounded; a
// prompt is got as a user message naming its server, prompt and the
// digest of its arguments (not the arguments); its arguments are checked
// against those it declares; a prompt over the bound is not taken; a
// server that declares none, or is not connected, is not reached.
func TestServersPrompts(t *testing.T) {
	ctx := context.Background()
	hs := httptestServer(t, promptServer(), nil)
	plain, _ := newTestServer(t.TempDir())
	hp := httptestServer(t, plain, nil)
	c, err := mcp.Connect(ctx, mcp.Servers{"pr": {URL: hs.URL}, "plain": {URL: hp.URL}}, mcp.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	all, err := c.Prompts(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 3)
	var review mcp.PromptInfo
	for _, p := range all {
		require.Equal(t, "pr", p.Server, "only the server that declares prompts")
		if p.Name == "review" {
			review = p
		}
	}
	require.Equal(t, "Review a file [2J", review.Description, "one line, no control characters")
	require.Equal(t, []mcp.PromptArgument{{Name: "file", Required: true}, {Name: "focus"}}, review.Arguments)
	_, err = c.Prompts(ctx, "plain")
	require.ErrorIs(t, err, mcp.ErrNoPrompts)
	_, err = c.Prompts(ctx, "nope")
	require.ErrorIs(t, err, mcp.ErrNoPrompts)

	m, err := c.Prompt(ctx, "pr", "review", map[string]string{"file": "main.go"})
	require.NoError(t, err)
	require.Equal(t, "Review main.go\x1b]0;owned\x07", m.Text, "the server's text, kept as it is (escaped where shown)")
	require.Equal(t, &facts.MCPPrompt{Server: "pr", Prompt: "review", Args: mcp.ArgsDigest(map[string]string{"file": "main.go"})}, m.Prompt)
	require.NotContains(t, m.Prompt.Args, "main.go")
	require.NoError(t, m.Validate())
	require.NotEqual(t, mcp.ArgsDigest(map[string]string{"file": "main.go"}), mcp.ArgsDigest(map[string]string{"file": "other.go"}))

	for _, args := range []map[string]string{
		nil,                        // file is required
		{"file": " "},              // and not blank
		{"file": "a", "mode": "x"}, // not declared
		{"file": strings.Repeat("a", mcp.MaxPromptArg+1)},
	} {
		_, err = c.Prompt(ctx, "pr", "review", args)
		require.ErrorIs(t, err, mcp.ErrPromptArgs, "%v", args)
	}
	_, err = c.Prompt(ctx, "pr", "nope", nil)
	require.ErrorContains(t, err, `lists no prompt "nope"`)
	_, err = c.Prompt(ctx, "plain", "review", map[string]string{"file": "a"})
	require.ErrorIs(t, err, mcp.ErrNoPrompts)
	_, err = c.Prompt(ctx, "pr", "huge", nil)
	require.ErrorIs(t, err, mcp.ErrPromptTooLarge)

	m, err = c.Prompt(ctx, "pr", "mixed", nil)
	require.NoError(t, err)
	require.Equal(t, "Look at this.\n\n[assistant] I will.\n\n[resource file:///a.txt]\na's text\n\n[image image/png, 3 bytes, not given]", m.Text)
	require.Empty(t, m.Prompt.Args)
}
