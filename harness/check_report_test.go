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
)

// checkExists is a check of this test: its target file exists. Its
// reason quotes the report, which it reads but does not decide from.
const checkExists = "harness_test_exists"

func init() {
	action.RegisterCheck(checkExists, func(_ context.Context, spec facts.CheckSpec, env action.CheckEnv) (bool, string, error) {
		_, err := os.Stat(filepath.Join(env.Root, filepath.FromSlash(spec.Target)))
		if err != nil {
			return false, spec.Target + " is missing though the tool said " + env.Report.Stdout, nil
		}
		return true, spec.Target + " exists; the tool said " + env.Report.Stdout, nil
	})
	action.RegisterCheckArgs(checkExists, func(spec facts.CheckSpec) error {
		if !filepath.IsLocal(spec.Target) {
			return action.ErrBadCheckArgs
		}
		return nil
	})
}

// A check is given the adapter's report, but its verdict comes from the
// bound target: a tool that claims a write it did not make fails.
func TestCheckReadsReportDecidesFromTarget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		write bool
		want  facts.Verdict
	}{{"wrote", true, facts.VerdictPass}, {"claims only", false, facts.VerdictFail}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tool := harness.Tool{
				Spec: facts.ToolSchema{Name: "make"}, Needs: action.Write, Ask: action.AskNever,
				Run: func(context.Context, json.RawMessage) (facts.Report, error) {
					if tc.write {
						require.NoError(t, os.WriteFile(filepath.Join(root, "made.txt"), []byte("x"), 0o644))
					}
					return facts.Report{Status: facts.StatusSucceeded, Stdout: "made made.txt"}, nil
				},
				Declare: func(json.RawMessage) (*facts.CheckSpec, error) {
					return &facts.CheckSpec{Name: checkExists, Target: "made.txt"}, nil
				},
			}
			tb, err := harness.NewToolbox(tool)
			require.NoError(t, err)
			store, err := thread.OpenPebble(t.TempDir())
			require.NoError(t, err)
			defer store.Close()
			script, err := model.ParseScript("test", []byte(`{"tool_calls": [{"id": "m", "name": "make", "args": "{}"}]}
{"text": "Done."}
`))
			require.NoError(t, err)
			actor, err := harness.CodingActor(harness.Config{}, tb)
			require.NoError(t, err)
			rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tb, Workspace: root}, harness.Config{})
			require.NoError(t, err)
			_, err = rt.Start(ctx, actor, "t1", "Make it")
			require.NoError(t, err)
			var rec facts.CheckRecorded
			for f, err := range store.Read(ctx, "t1", 1) {
				require.NoError(t, err)
				if f.Kind == facts.KindCheckRecorded {
					rec, err = facts.Decode[facts.CheckRecorded](f)
					require.NoError(t, err)
				}
			}
			require.Equal(t, tc.want, rec.Verdict, rec.Reason)
			require.Contains(t, rec.Reason, "the tool said made made.txt", "the check read the report")
		})
	}
}
