package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcpserver"
)

// workspace is a Workspace of one runtime whose threads are driven by a
// policy (Opened.Drive.Policy).
type workspace struct {
	env    *harnesstest.Env
	policy drive.Policy
}

func (w workspace) Open(context.Context, mcpserver.OpenRequest) (*mcpserver.Opened, error) {
	return &mcpserver.Opened{
		Runtime: w.env.RT, Actor: w.env.Actor,
		Drive: drive.Options{Policy: w.policy},
		Close: func() error { return nil },
	}, nil
}

// start calls the start tool of a server on ws over an in-memory
// connection and returns the view it answers with.
func start(t *testing.T, ws mcpserver.Workspace, id string) mcpserver.ThreadView {
	t.Helper()
	ctx := context.Background()
	srv := mcpserver.NewServer(ws, mcpserver.ServerOptions{})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "start", Arguments: map[string]any{"task": "Set the cache TTL to 300", "thread": id}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var v mcpserver.ThreadView
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// TestGoPolicyDrivesTheMCPServer: a policy written in Go, given to the MCP
// server through Opened.Drive, decides the thread's calls while the
// server drives it (the client answers nothing); each answer is recorded
// by the policy's name with its rule as the reason — an approval runs
// the call, a denial is told to the model.
func TestGoPolicyDrivesTheMCPServer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approved bool
		rule     string
		runs     int64
	}{
		{name: "approves", approved: true, rule: "cache.toml may change", runs: 1},
		{name: "denies", approved: false, rule: "nothing else may change", runs: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := harnesstest.New(t, harnesstest.ToolScript)
			var asked []string
			policy := drive.PolicyFunc("policy:mcp", func(tool string, c action.Capability, args string) drive.Decision {
				asked = append(asked, tool+" "+string(c))
				if p, ok := drive.Subject(args); ok && tc.approved && p == "cache.toml" {
					return drive.Decision{Approved: true, Rule: tc.rule}
				}
				return drive.Decision{Rule: tc.rule}
			})
			v := start(t, workspace{env: env, policy: policy}, "t1")
			require.Equal(t, harness.StatusDone, v.Status, "%+v", v)
			require.Equal(t, []string{"write_file write"}, asked)
			require.Equal(t, tc.runs, env.Runs.Load())
			ans, err := facts.Decode[facts.ConfirmationAnswered](env.Last("t1", facts.KindConfirmationAnswered))
			require.NoError(t, err)
			require.Equal(t, tc.approved, ans.Approved)
			require.Equal(t, "policy:mcp", ans.By)
			require.Equal(t, tc.rule, ans.Reason)
		})
	}
}

// Without a policy the server approves nothing on its caller's behalf:
// the thread parks on the confirmation.
func TestNoPolicyParksTheMCPThread(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	v := start(t, workspace{env: env}, "t1")
	require.Equal(t, harness.StatusParked, v.Status, "%+v", v)
	require.Zero(t, env.Runs.Load())
}
