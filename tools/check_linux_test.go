package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// TestCheckCommandIsSandboxed: a declared command_succeeds check runs in
// the sandbox its request recorded, as run_command does, but with the
// workspace read-only: a failing check that tries to write outside the
// workspace, into the workspace (after the observation, where nobody
// would see it) and into the store is contained, and its record says
// where it ran. A request recorded with the network off keeps it off.
func TestCheckCommandIsSandboxed(t *testing.T) {
	s, root := sandboxRepo(t)
	outside := t.TempDir()
	ws, err := action.NewWorkspace(root)
	require.NoError(t, err)
	defer ws.Close()
	b := &action.Boundary{Observer: ws, Granted: []action.Capability{action.Read}, Root: root, Commands: s}
	rec := s.Sandbox().Record()
	check := action.CommandSucceeds("sh", "-c", `echo pwned > `+filepath.Join(outside, "planted")+`; echo pwned > inside.txt; echo pwned > .harness/db/CURRENT; echo "it's" "quoted"; exit 1`)
	req := action.Request{ActionID: "a1", Capability: action.Read, Adapter: "noop", Check: &check, Sandbox: &rec}
	bg, done := b.Begin(context.Background(), req)
	require.Nil(t, done)
	end := b.Finish(context.Background(), req, bg, noop{})
	c, got := end.Completed, end.Check
	require.NotNil(t, got)
	require.Equal(t, facts.VerdictFail, got.Verdict, got.Reason)
	require.Contains(t, got.Reason, "exited 1")
	require.Contains(t, got.Reason, "it's quoted", "argv reaches the command word for word")
	require.NoFileExists(t, filepath.Join(outside, "planted"))
	require.NoFileExists(t, filepath.Join(root, "inside.txt"))
	b2, err := os.ReadFile(filepath.Join(root, ".harness", "db", "CURRENT"))
	require.NoError(t, err)
	require.Equal(t, storeSecret, string(b2))
	require.NotNil(t, got.Sandbox, "the check records where it ran")
	require.Equal(t, facts.SandboxReadOnly, got.Sandbox.Mode)
	require.False(t, got.Sandbox.Network)
	require.NotContains(t, got.Sandbox.Writable, root)
	require.NoError(t, got.Validate())
	require.Equal(t, facts.EffectNone, c.EffectState, "a read that changed nothing")

	// A passing check passes; mode off, as recorded, runs unsandboxed.
	ok := action.CommandSucceeds("test", "-f", "a.txt")
	req.Check = &ok
	got = b.Finish(context.Background(), req, bg, noop{}).Check
	require.Equal(t, facts.VerdictPass, got.Verdict, got.Reason)
	off := rec
	off.Mode = facts.SandboxOff
	req.Sandbox = &off
	got = b.Finish(context.Background(), req, bg, noop{}).Check
	require.Equal(t, facts.VerdictPass, got.Verdict, got.Reason)
	require.Equal(t, facts.SandboxOff, got.Sandbox.Mode)
	require.Equal(t, sandbox.Off, sandbox.Mode(got.Sandbox.Mode))
}

// noop is an adapter that does nothing and says so.
type noop struct{}

func (noop) Name() string { return "noop" }
func (noop) Execute(context.Context, action.Request) (facts.Report, error) {
	return facts.Report{Status: facts.StatusSucceeded}, nil
}
