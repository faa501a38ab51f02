package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
)

// TestDeclaredCommandCheckRunsInTheSandbox: a tool that runs no command
// itself but declares a command_succeeds check has the sandbox of the
// toolbox's commands recorded on its request, and the check runs there
// (its workspace read-only), not with the harness's authority: a check
// that writes outside the workspace writes nothing, fails, and records
// where it ran.
func TestDeclaredCommandCheckRunsInTheSandbox(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	set, err := tools.New(root)
	require.NoError(t, err)
	if err := set.Sandbox().Check(); err != nil {
		t.Skip(err)
	}
	check := action.CommandSucceeds("sh", "-c", "echo pwned > "+filepath.Join(outside, "planted")+"; exit 1")
	probe := harness.Tool{
		Spec: facts.ToolSchema{Name: "probe"}, Needs: action.Read,
		Run: func(_ context.Context, _ json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		},
		Declare: func(json.RawMessage) (*facts.CheckSpec, error) { return &check, nil },
	}
	adapters := []harness.ToolAdapter{probe}
	for _, tl := range set.Tools() {
		adapters = append(adapters, tl)
	}
	tb, err := harness.NewToolbox(adapters...)
	require.NoError(t, err)
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer store.Close()
	script, err := model.ParseScript("test", []byte(`{"tool_calls": [{"id": "p", "name": "probe", "args": "{}"}]}
{"text": "Done."}
`))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tb, Workspace: root}, cfg)
	require.NoError(t, err)
	_, err = rt.Start(context.Background(), actor, "t1", "probe")
	require.NoError(t, err)

	var req facts.ActionRequested
	var rec facts.CheckRecorded
	for f, err := range store.Read(context.Background(), "t1", 1) {
		require.NoError(t, err)
		switch f.Kind {
		case facts.KindActionRequested:
			req, err = facts.Decode[facts.ActionRequested](f)
			require.NoError(t, err)
		case facts.KindCheckRecorded:
			rec, err = facts.Decode[facts.CheckRecorded](f)
			require.NoError(t, err)
		}
	}
	require.NotNil(t, req.Sandbox, "the request records where its check's command runs")
	require.Equal(t, facts.SandboxWorkspaceWrite, req.Sandbox.Mode)
	require.Equal(t, facts.VerdictFail, rec.Verdict, rec.Reason)
	require.Contains(t, rec.Reason, "exited 1")
	require.NotNil(t, rec.Sandbox)
	require.Equal(t, facts.SandboxReadOnly, rec.Sandbox.Mode)
	_, err = os.Stat(filepath.Join(outside, "planted"))
	require.ErrorIs(t, err, os.ErrNotExist, "the check wrote outside the workspace")
}
