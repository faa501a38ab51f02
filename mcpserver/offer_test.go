package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcpserver"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// ownWorkspace opens one runtime whose threads work in worktrees of their
// own (as a worker's do), its writes approved by a policy that approves
// write_file and nothing else.
type ownWorkspace struct {
	rt    *harness.Runtime
	actor harness.Actor
}

func (w ownWorkspace) Open(context.Context, mcpserver.OpenRequest) (*mcpserver.Opened, error) {
	policy := drive.PolicyFunc("policy:writes", func(tool string, _ action.Capability, _ string) drive.Decision {
		return drive.Decision{Approved: tool == "write_file", Ask: tool != "write_file", Rule: "write_file"}
	})
	return &mcpserver.Opened{Runtime: w.rt, Actor: w.actor, Drive: drive.Options{Policy: policy}, Close: func() error { return nil }}, nil
}

// TestMCPAnswersAThreadsOfferedMerge: the end of a thread in its own
// worktree offers its merge; through the MCP server a client sees the
// offer, its diff and its digest, and its approval (a client whose
// answers are a person's) brings the change in.
func TestMCPAnswersAThreadsOfferedMerge(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgSign=false"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	m, err := model.ParseScript("mcp", []byte(`{"text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done."}`))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:mcp"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	cfg.OwnWorktree = true
	st, err := stock.NewStock(p, cfg, stock.WithWorktreeDir(t.TempDir()))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	svc, err := st.Services(m, stock.BlobsOf(store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, st.Config)
	require.NoError(t, err)

	srv := mcpserver.NewServer(ownWorkspace{rt, st.Actor}, mcpserver.ServerOptions{ClientApproves: true})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	call := func(tool string, args map[string]any) mcpserver.ThreadView {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		if res.IsError {
			b, _ := json.Marshal(res.Content)
			t.Fatalf("%s: %s", tool, b)
		}
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		var v mcpserver.ThreadView
		require.NoError(t, json.Unmarshal(b, &v))
		return v
	}

	v := call("start", map[string]any{"task": "Set the cache TTL to 300", "thread": "t1"})
	require.Equal(t, harness.StatusParked, v.Status)
	require.Len(t, v.Waits, 1)
	w := v.Waits[0]
	require.True(t, strings.HasPrefix(w.RequestID, "merge-"), w.RequestID)
	require.Equal(t, "merge_worktree", w.Tool)
	require.NotNil(t, w.Offer)
	require.Equal(t, []string{"cache.toml"}, w.Offer.Changed)
	require.Contains(t, w.Preview, "+ttl_seconds = 300")
	require.Equal(t, "ttl_seconds = 60\n", readFile(t, root, "cache.toml"))

	v = call("answer", map[string]any{"thread": "t1", "request_id": w.RequestID, "approve": true, "digest": w.Digest})
	require.Equal(t, harness.StatusDone, v.Status)
	require.Equal(t, "ttl_seconds = 300\n", readFile(t, root, "cache.toml"))
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return string(b)
}
