package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcpserver"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// localWorkspace is a directory of its own with a scripted model, and a
// user configuration directory of its own; said gathers what its Front
// tells the person.
func localWorkspace(t *testing.T, model string) (*mcpserver.Local, string, *[]string) {
	t.Helper()
	root, cfg := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "script.jsonl"), []byte(`{"text": "Done."}`+"\n"), 0o644))
	said := &[]string{}
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	f := &stock.Front{Dir: root, Getenv: getenv, Version: "harness/test", Warn: func(line string) { *said = append(*said, line) }}
	return &mcpserver.Local{Front: f, Model: model, ModelDir: root}, root, said
}

// Local opens the directory's workspace for each request, as a command
// does: the first start makes the store and runs the thread with the
// server's model; each request closes what it opened, so that the store
// is free between requests (a second Local, another process's, opens it).
func TestLocalStartsAndReads(t *testing.T) {
	ws, root, _ := localWorkspace(t, "scripted:script.jsonl")
	call := client(t, ws, mcpserver.ServerOptions{})
	why, v := call("start", map[string]any{"task": "Say done", "thread": "t1"})
	require.Empty(t, why)
	require.Equal(t, harness.StatusDone, v.Status)
	require.DirExists(t, filepath.Join(root, stock.StoreDir), "the first start made the store")

	// Between requests nothing holds the store: another opener reads it.
	other, _, _ := localWorkspace(t, "")
	other.Front.Dir = root
	o, err := other.Open(context.Background(), mcpserver.OpenRequest{})
	require.NoError(t, err)
	first, err := thread.ReadAt(context.Background(), o.Runtime.Store, "t1", 1)
	require.NoError(t, err)
	require.NoError(t, o.Close())
	require.Equal(t, facts.KindUserMessage, first.Kind)

	why, v = call("view", map[string]any{"thread": "t1"})
	require.Empty(t, why)
	require.Equal(t, harness.StatusDone, v.Status)

	peek, done, err := ws.Peek(context.Background())
	require.NoError(t, err)
	require.NotNil(t, peek)
	done()
}

// A start with no model anywhere is refused, naming where to set one,
// and nothing is made; a model the server cannot load is each request's
// error, not the server's end.
func TestLocalModelRefusals(t *testing.T) {
	ws, root, _ := localWorkspace(t, "")
	call := client(t, ws, mcpserver.ServerOptions{})
	why, _ := call("start", map[string]any{"task": "Say done"})
	require.Contains(t, why, "no model given")
	require.Contains(t, why, filepath.Join(root, stock.StoreDir))
	require.NoDirExists(t, filepath.Join(root, stock.StoreDir, "db"))

	bad, _, _ := localWorkspace(t, "scripted:missing.jsonl")
	call = client(t, bad, mcpserver.ServerOptions{})
	why, _ = call("start", map[string]any{"task": "Say done", "thread": "t1"})
	require.Contains(t, why, "missing.jsonl")
	why, _ = call("view", map[string]any{"thread": "t1"})
	require.Contains(t, why, "model")
	require.Contains(t, why, "missing.jsonl", "a request that reads the thread loads the server's model too")
}
