package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcpserver"
)

// connectWith is a client of a server on ws with opts, over an in-memory
// connection.
func connectWith(t *testing.T, ws mcpserver.Workspace, opts mcpserver.ServerOptions) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcpserver.NewServer(ws, opts)
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool; it returns the view, or the error the tool reported.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (mcpserver.ThreadView, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	if res.IsError {
		return mcpserver.ThreadView{}, res.Content[0].(*sdk.TextContent).Text
	}
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var v mcpserver.ThreadView
	require.NoError(t, json.Unmarshal(b, &v))
	return v, ""
}

// TestAnswerRaisesTurns: a thread that ran its bound in turns waits on
// the budget wait; the answer tool raises it by a number of turns (the
// view says how), only for a client whose answers are a person's, never
// by none or fewer; the raise is recorded and the thread goes on.
func TestAnswerRaisesTurns(t *testing.T) {
	env := harnesstest.New(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}]}
{"text": "read it"}`, harness.WithBudget(1, 0))
	ws := workspace{env: env}

	agent := connectWith(t, ws, mcpserver.ServerOptions{})
	v, e := call(t, agent, "start", map[string]any{"task": "Read", "thread": "t1"})
	require.Empty(t, e)
	require.Len(t, v.Waits, 1)
	require.Equal(t, fold.WaitBudget, v.Waits[0].Kind)
	require.Contains(t, v.Answers["budget"], `"turns"`)
	_, e = call(t, agent, "answer", map[string]any{"thread": "t1", "request_id": "budget", "turns": 1})
	require.Contains(t, e, "cannot raise the budget", "a client not vouched for as a person")

	person := connectWith(t, ws, mcpserver.ServerOptions{ClientApproves: true})
	for _, bad := range []map[string]any{{}, {"turns": 0}, {"turns": -1}} {
		args := map[string]any{"thread": "t1", "request_id": "budget"}
		for k, x := range bad {
			args[k] = x
		}
		_, e = call(t, person, "answer", args)
		require.NotEmpty(t, e, "%v", bad)
	}
	require.Zero(t, countOf(env.Kinds("t1"), facts.KindBudgetRaised), "nothing was appended")

	v, e = call(t, person, "answer", map[string]any{"thread": "t1", "request_id": "budget", "turns": 1, "by": "ana"})
	require.Empty(t, e)
	require.Equal(t, harness.StatusDone, v.Status)
	raised, err := facts.Decode[facts.BudgetRaised](env.Last("t1", facts.KindBudgetRaised))
	require.NoError(t, err)
	require.Equal(t, int64(1), raised.Add.Turns)
}

func countOf(kinds []facts.Kind, k facts.Kind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}
