package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// A tool that declares a check nobody registered (a misspelled name), or
// a known check with arguments it cannot take, has its call refused when
// it is requested: nobody is asked to approve it, the tool never runs,
// and the model is told why — not an "unknown check" or "could not
// decide" recorded after an effect a person approved.
func TestUnknownCheckRefusedAtRequest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, check string
		refused     bool
		// target and args of the spec ("": notes.md, {"text":"x"}), and
		// what the refusal says.
		target, args, want string
	}{
		{name: "misspelled", check: "file_equal", refused: true},
		{name: "empty", check: "", refused: true},
		{name: "registered", check: action.CheckFileContains},
		{name: "unknown arg", check: action.CheckFileContains, refused: true, args: `{"txt":"x"}`, want: `unknown field "txt"`},
		{name: "arg of another type", check: action.CheckFileContains, refused: true, args: `{"text":5}`, want: "malformed check arguments"},
		{name: "no args", check: action.CheckFileContains, refused: true, args: `null`, want: "malformed check arguments"},
		{name: "target outside", check: action.CheckFileContains, refused: true, target: "../../etc/passwd", want: "not a path inside the workspace"},
		{name: "absolute target", check: action.CheckFileEquals, refused: true, target: "/etc/passwd", args: `{"sha256":"` + strings.Repeat("0", 64) + `","size":1}`, want: "not a path inside the workspace"},
		{name: "bad digest", check: action.CheckFileEquals, refused: true, args: `{"sha256":"zz","size":1}`, want: "not a hex SHA-256 digest"},
		{name: "negative size", check: action.CheckFileEquals, refused: true, args: `{"sha256":"` + strings.Repeat("0", 64) + `","size":-1}`, want: "negative"},
		{name: "empty argv", check: action.CheckCommandSucceeds, refused: true, args: `{"argv":[]}`, want: "empty argv"},
		{name: "good file_equals", check: action.CheckFileEquals, args: `{"sha256":"` + strings.Repeat("0", 64) + `","size":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int64
			tool := harness.Tool{
				Spec: facts.ToolSchema{Name: "note"}, Needs: action.Write,
				Run: func(context.Context, json.RawMessage) (facts.Report, error) {
					ran.Add(1)
					return facts.Report{Status: facts.StatusSucceeded}, nil
				},
				Declare: func(json.RawMessage) (*facts.CheckSpec, error) {
					spec := &facts.CheckSpec{Name: tc.check, Target: "notes.md", Args: facts.RawJSON(`{"text":"x"}`)}
					if tc.target != "" {
						spec.Target = tc.target
					}
					if tc.args != "" {
						spec.Args = facts.RawJSON(tc.args)
					}
					return spec, nil
				},
			}
			tb, err := harness.NewToolbox(tool)
			require.NoError(t, err)
			store, err := thread.OpenPebble(t.TempDir())
			require.NoError(t, err)
			defer store.Close()
			script, err := model.ParseScript("test", []byte(`{"tool_calls": [{"id": "n", "name": "note", "args": "{}"}]}
{"text": "Done."}
`))
			require.NoError(t, err)
			m := &recordingModel{Model: script}
			cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
			require.NoError(t, err)
			actor, err := harness.CodingActor(cfg, tb)
			require.NoError(t, err)
			rt, err := harness.NewRuntime(store, harness.Services{Model: m, Tools: tb, Workspace: t.TempDir()}, cfg)
			require.NoError(t, err)
			out, err := rt.Start(ctx, actor, "t1", "Note it")
			require.NoError(t, err)
			if !tc.refused {
				require.Equal(t, harness.StatusParked, out.Status, "a declared check that exists: a person is asked")
				return
			}
			require.Equal(t, harness.StatusDone, out.Status, "nobody is asked: %+v", out.Waits)
			require.Zero(t, ran.Load(), "the tool never ran")
			var req facts.ActionRequested
			for f, err := range store.Read(ctx, "t1", 1) {
				require.NoError(t, err)
				require.NotEqual(t, facts.KindConfirmationRequested, f.Kind)
				require.NotEqual(t, facts.KindCheckRecorded, f.Kind)
				if f.Kind == facts.KindActionRequested {
					req, err = facts.Decode[facts.ActionRequested](f)
					require.NoError(t, err)
				}
			}
			if tc.want != "" {
				require.Contains(t, req.Refused, tc.want)
			} else {
				require.Contains(t, req.Refused, "unknown check")
				require.Contains(t, req.Refused, action.CheckFileEquals, "the refusal names the checks there are")
			}
			reqs := m.requests()
			require.Len(t, reqs, 2)
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			require.True(t, strings.Contains(last.Text, "note declares a check that cannot be decided"), last.Text)
		})
	}
}
