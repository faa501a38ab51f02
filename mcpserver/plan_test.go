package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcpserver"
)

// client connects a client named "test" to a server on ws with opts over
// an in-memory connection; call calls a tool and gives the text of a
// refusal, or "" and the view.
func client(t *testing.T, ws mcpserver.Workspace, opts mcpserver.ServerOptions) func(tool string, args map[string]any) (string, mcpserver.ThreadView) {
	t.Helper()
	ctx := context.Background()
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := mcpserver.NewServer(ws, opts).Connect(ctx, serverEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return func(tool string, args map[string]any) (string, mcpserver.ThreadView) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err.Error(), mcpserver.ThreadView{}
		}
		if res.IsError {
			require.NotEmpty(t, res.Content)
			return res.Content[0].(*sdk.TextContent).Text, mcpserver.ThreadView{}
		}
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		var v mcpserver.ThreadView
		require.NoError(t, json.Unmarshal(b, &v))
		return "", v
	}
}

// TestPlanTool: the MCP server switches a thread's plan mode as the page
// and the API do (drive.SetPlanMode), recorded as given by whom through
// which client. On narrows what the thread may do, so any client may;
// the same switch again appends nothing. Off lets the thread write
// again: refused (nothing appended) unless the server was told its
// client's answers are a person's. Switched on and run on, the thread's
// next turn plans: it waits on its plan.
func TestPlanTool(t *testing.T) {
	env := harnesstest.New(t, `{"text": "Done."}
{"text": "Plan A."}
{"text": "Carried out."}
`)
	ws := workspace{env: env}
	call := client(t, ws, mcpserver.ServerOptions{})
	why, v := call("start", map[string]any{"task": "Set the cache TTL to 300", "thread": "t1"})
	require.Empty(t, why)
	require.Equal(t, harness.StatusDone, v.Status)
	planSet := func() facts.PlanModeSet {
		p, err := facts.Decode[facts.PlanModeSet](env.Last("t1", facts.KindPlanModeSet))
		require.NoError(t, err)
		return p
	}

	for _, args := range []map[string]any{
		{"thread": "t1"},
		{"thread": "t1", "on": nil},
		{"thread": "t1", "on": "yes"},
		{"thread": "t1", "on": 1},
		{"thread": "t9", "on": true},
		{"thread": "../t1", "on": true},
		{"thread": "", "on": true},
	} {
		why, _ = call("plan", args)
		require.NotEmpty(t, why, "%v", args)
	}
	require.NotContains(t, env.Kinds("t1"), facts.KindPlanModeSet)

	why, v = call("plan", map[string]any{"thread": "t1", "on": true, "by": "ana"})
	require.Empty(t, why)
	require.Equal(t, drive.Yes, v.Posted)
	require.Equal(t, facts.PlanModeSet{On: true, By: "ana (via mcp:test)"}, planSet())
	n := len(env.Log("t1"))
	why, v = call("plan", map[string]any{"thread": "t1", "on": true})
	require.Empty(t, why)
	require.Equal(t, drive.No, v.Posted, "already on: nothing appended")
	require.Len(t, env.Log("t1"), n)

	why, _ = call("plan", map[string]any{"thread": "t1", "on": false, "by": "ana"})
	require.Contains(t, why, "approvals stay with a person")
	require.Contains(t, why, "cannot switch plan mode off for thread t1")
	require.Len(t, env.Log("t1"), n, "nothing appended")
	require.True(t, planSet().On)

	// Run on with a message: the next turn plans, and waits for a person.
	_, err := env.Post("t1", facts.KindUserMessage, facts.UserMessage{Text: "Now make it 600"}, "more")
	require.NoError(t, err)
	why, v = call("resume", map[string]any{"thread": "t1"})
	require.Empty(t, why)
	require.Equal(t, harness.StatusParked, v.Status)
	require.Equal(t, "plan-2", v.Waits[0].RequestID)
	ref := drive.Ref(v.Waits[0])
	require.Contains(t, v.Answers[ref], `"approve": true} acts on the plan`, "how to answer a plan")
	require.Contains(t, v.Answers[ref], `"text": "…"} asks for another`)

	person := client(t, ws, mcpserver.ServerOptions{ClientApproves: true, Person: func(*sdk.CallToolRequest) string { return "bo" }})
	why, v = person("plan", map[string]any{"thread": "t1", "on": false, "by": "mallory"})
	require.Empty(t, why)
	require.Equal(t, drive.Yes, v.Posted)
	require.Equal(t, facts.PlanModeSet{By: "bo (via mcp:test)"}, planSet(), "the person the front end knows, not the name given")
}
