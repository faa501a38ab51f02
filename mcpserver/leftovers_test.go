package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcpserver"
)

// TestFactsToolIsBounded: the facts tool gives a page as the facts
// resource does: at most about FactsBytes of JSON however large the
// facts, at most FactsPage facts whatever limit is asked, and says there
// are more and where they start.
func TestFactsToolIsBounded(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	ctx := context.Background()
	big := strings.Repeat("x", 64<<10)
	var ds []facts.Draft
	for i := range 200 {
		d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(fmt.Sprint(i)), facts.UserMessage{Text: big})
		require.NoError(t, err)
		ds = append(ds, d)
	}
	_, err := env.Store.Append(ctx, "huge", 0, ds...)
	require.NoError(t, err)
	cs, _, _ := connect(t, workspace{env: env})
	page := func(args map[string]any) (string, mcpserver.FactsToolView) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "facts", Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%+v", res.Content)
		text := res.Content[0].(*sdk.TextContent).Text
		var v mcpserver.FactsToolView
		require.NoError(t, json.Unmarshal([]byte(text), &v))
		return text, v
	}
	text, v := page(map[string]any{"thread": "huge"})
	require.LessOrEqual(t, len(text), mcpserver.FactsBytes+128<<10, "a page is about FactsBytes")
	require.NotEmpty(t, v.Facts)
	require.Less(t, len(v.Facts), 200)
	require.True(t, v.More)
	last := v.Facts[len(v.Facts)-1].Seq
	require.Contains(t, v.Next, fmt.Sprintf("after=%d", last))
	_, v = page(map[string]any{"thread": "huge", "after": last})
	require.Equal(t, last+1, v.Facts[0].Seq, "the next page starts after the last fact given")

	var small []facts.Draft
	for i := range 1200 {
		d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(fmt.Sprint(i)), facts.UserMessage{Text: "hi"})
		require.NoError(t, err)
		small = append(small, d)
	}
	_, err = env.Store.Append(ctx, "many", 0, small...)
	require.NoError(t, err)
	_, v = page(map[string]any{"thread": "many"})
	require.Len(t, v.Facts, 200, "the default")
	_, v = page(map[string]any{"thread": "many", "limit": 100000})
	require.Len(t, v.Facts, mcpserver.FactsPage, "no more than a page whatever the limit")
	require.True(t, v.More)
	_, v = page(map[string]any{"thread": "many", "after": 1190})
	require.Len(t, v.Facts, 10)
	require.False(t, v.More)
}

// countingWorkspace counts the workspace's openings.
type countingWorkspace struct {
	workspace
	opens *atomic.Int32
}

func (w countingWorkspace) Open(ctx context.Context, req mcpserver.OpenRequest) (*mcpserver.Opened, error) {
	w.opens.Add(1)
	return w.workspace.Open(ctx, req)
}

// TestSummariseOpensOnce: summarise_thread reads the thread's state and
// its last facts in one opening of the workspace (one moment of the log,
// and one wait for a store another process holds).
func TestSummariseOpensOnce(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	start(t, workspace{env: env}, "t1")
	ws := countingWorkspace{workspace: workspace{env: env}, opens: &atomic.Int32{}}
	cs, _, _ := connect(t, ws)
	before := ws.opens.Load()
	res, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: mcpserver.PromptSummarise, Arguments: map[string]string{"thread": "t1"}})
	require.NoError(t, err)
	require.Len(t, res.Messages, 3)
	facts := res.Messages[2].Content.(*sdk.EmbeddedResource).Resource.Text
	require.Contains(t, facts, `"user.message"`)
	require.Equal(t, int32(1), ws.opens.Load()-before, "one opening")
}
