package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
)

// A server allowed sampling asks for model turns during a call: each that
// passes the client's bounds reaches the action's action.Sample with the
// server's text only (its system prompt, its messages), the answer's
// tokens capped by the settings, includeContext passed on to be recorded;
// the answer goes back as the server's result. What does not pass is
// refused before any turn runs: a request that offers tools, one with an
// image, one over MaxSampleBytes or MaxSampleMessages, one past the
// call's bound (SamplingPerCall).
func TestSamplingRunsThroughTheAction(t *testing.T) {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "sampler", Version: "1"}, nil)
	var caps *sdk.ClientCapabilities
	text := func(s string) []*sdk.SamplingMessage {
		return []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: s}}}
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "Ask the model, in every way."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			caps = req.Session.InitializeParams().Capabilities
			var out []string
			say := func(name string, res *sdk.CreateMessageResult, err error) {
				if err != nil {
					out = append(out, fmt.Sprintf("%s: %v", name, err))
					return
				}
				out = append(out, fmt.Sprintf("%s: %s %s %s", name, res.Content.(*sdk.TextContent).Text, res.Model, res.StopReason))
			}
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 99999, IncludeContext: "allServers",
				SystemPrompt: "Be brief.", Messages: []*sdk.SamplingMessage{
					{Role: "user", Content: &sdk.TextContent{Text: "Name a colour."}},
					{Role: "assistant", Content: &sdk.TextContent{Text: "Which kind?"}},
					{Role: "user", Content: &sdk.TextContent{Text: "Any."}}}})
			say("first", res, err)
			_, err = req.Session.CreateMessageWithTools(ctx, &sdk.CreateMessageWithToolsParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessageV2{{Role: "user", Content: []sdk.Content{&sdk.TextContent{Text: "Run it."}}}},
				Tools:    []*sdk.Tool{{Name: "rm", InputSchema: map[string]any{"type": "object"}}}})
			say("tools", nil, err)
			res, err = req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}})
			say("image", res, err)
			res, err = req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10, Messages: text(strings.Repeat("x", mcp.MaxSampleBytes+1))})
			say("huge", res, err)
			many := make([]*sdk.SamplingMessage, mcp.MaxSampleMessages+1)
			for i := range many {
				many[i] = text("hi")[0]
			}
			res, err = req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10, Messages: many})
			say("many", res, err)
			res, err = req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10, Messages: text("Again.")})
			say("second", res, err)
			res, err = req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10, Messages: text("Once more.")})
			say("third", res, err)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(out, "\n")}}}, nil, nil
		})
	hs := httptestServer(t, srv, nil)
	c, err := mcp.Connect(ctx, mcp.Servers{"a": {URL: hs.URL, Sampling: true, SamplingMaxTokens: 300, SamplingPerCall: 2}}, mcp.Options{Workspace: t.TempDir()})
	require.NoError(t, err)
	defer c.Close()
	ask := toolNamed(c, "mcp__a__ask")
	require.NotNil(t, ask, c.Status()[0].Error)

	var mu sync.Mutex
	var got []action.SampleRequest
	sample := func(_ context.Context, r action.SampleRequest) (action.SampleResult, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		return action.SampleResult{Text: fmt.Sprintf("answer%d", len(got)), Model: "m1", Cut: len(got) == 2}, nil
	}
	r, err := ask.Execute(action.WithSample(ctx, sample), callOf(ask, "a1", `{}`))
	require.NoError(t, err)
	require.Equal(t, facts.StatusSucceeded, r.Status, r.Error)
	lines := strings.Split(r.Stdout, "\n")
	require.Len(t, lines, 7, r.Stdout)
	require.Equal(t, "first: answer1 m1 endTurn", lines[0])
	require.Contains(t, lines[1], "tools: ")
	require.Contains(t, lines[1], "harness refuses sampling with tools")
	require.Contains(t, lines[2], "image: ")
	require.Contains(t, lines[2], "only text is sampled here")
	require.Contains(t, lines[3], fmt.Sprintf("over %d bytes", mcp.MaxSampleBytes))
	require.Contains(t, lines[4], fmt.Sprintf("a request holds 1 to %d", mcp.MaxSampleMessages))
	require.Equal(t, "second: answer2 m1 maxTokens", lines[5])
	require.Contains(t, lines[6], `this call has taken the 2 sampling turns the settings allow a call of "a"`)

	require.Len(t, got, 2, "only the requests within bounds reach the model")
	first := got[0]
	require.Equal(t, "a1", first.ActionID)
	require.Equal(t, "a", first.Server)
	require.Equal(t, "Be brief.", first.System)
	require.Equal(t, []facts.Message{{Role: facts.RoleUser, Text: "Name a colour."}, {Role: facts.RoleAssistant, Text: "Which kind?"}, {Role: facts.RoleUser, Text: "Any."}}, first.Messages)
	require.Equal(t, int64(300), first.MaxTokens, "capped by the settings")
	require.Equal(t, int64(99999), first.AskedMaxTokens)
	require.Equal(t, "allServers", first.IncludeContext)
	require.Equal(t, int64(10), got[1].MaxTokens)

	require.NotNil(t, caps.Sampling, "declared to a server allowed it")
	require.Nil(t, caps.Sampling.Tools, "no tools in a sampling turn")
	require.Nil(t, caps.Sampling.Context, "no context either")
}

// A flood of sampling requests sent at once runs within the call's bound:
// the rest are refused, and the call ends only after every turn that ran.
func TestSamplingFloodIsBounded(t *testing.T) {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "flood", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "flood", Description: "Ask the model a lot."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok := 0
			for range 40 {
				wg.Go(func() {
					_, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
						Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
					if err == nil {
						mu.Lock()
						ok++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%d answered", ok)}}}, nil, nil
		})
	hs := httptestServer(t, srv, nil)
	c, err := mcp.Connect(ctx, mcp.Servers{"a": {URL: hs.URL, Sampling: true}}, mcp.Options{Workspace: t.TempDir()})
	require.NoError(t, err)
	defer c.Close()
	flood := toolNamed(c, "mcp__a__flood")
	var mu sync.Mutex
	ran := 0
	sample := func(context.Context, action.SampleRequest) (action.SampleResult, error) {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		ran++
		return action.SampleResult{Text: "ok"}, nil
	}
	r, err := flood.Execute(action.WithSample(ctx, sample), callOf(flood, "a1", `{}`))
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("%d answered", mcp.DefaultSamplingPerCall), r.Stdout)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, mcp.DefaultSamplingPerCall, ran)
}
