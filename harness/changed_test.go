package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/thread"
)

// The test binary re-executed: as an MCP server that writes the
// workspace on its own (changedServerEnv names the trigger file), or as
// a runtime that dies in the middle of an act (changedChildEnv holds a
// changedSpec in JSON). See TestMain.
const (
	changedServerEnv = "HARNESS_CHANGED_SERVER"
	changedChildEnv  = "HARNESS_CHANGED_CHILD"
)

// twoWrites writes a.txt (call a), then b.txt (call b), then is done.
const twoWrites = `{"text": "first", "tool_calls": [{"id": "a", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"a\\n\"}"}]}
{"text": "second", "tool_calls": [{"id": "b", "name": "write_file", "args": "{\"path\":\"b.txt\",\"content\":\"b\\n\"}"}]}
{"text": "done"}`

// changedSpec is the store, workspace and thread of a crash child, and the
// file its write creates before it hangs.
type changedSpec struct {
	Dir, Root, Thread, Marker string
}

// changedEnv is a runtime on a real Pebble store whose write_file writes
// a real workspace that a real observer reads, keeping its listings in
// the store.
type changedEnv struct {
	t     *testing.T
	spec  changedSpec
	store *thread.PebbleStore
	rt    *harness.Runtime
	actor harness.Actor
}

// newChangedEnv opens the store of spec and builds the runtime: write
// runs the write_file calls; more are tools beside it.
func newChangedEnv(spec changedSpec, write func(root string, args json.RawMessage) (facts.Report, error), more ...harness.ToolAdapter) (*changedEnv, error) {
	s, err := thread.OpenPebble(spec.Dir)
	if err != nil {
		return nil, err
	}
	m, err := model.ParseScript("changed", []byte(twoWrites))
	if err != nil {
		return nil, err
	}
	tool := harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file"},
		Needs: action.Write,
		Run:   func(_ context.Context, args json.RawMessage) (facts.Report, error) { return write(spec.Root, args) },
		Declare: func(raw json.RawMessage) (*facts.CheckSpec, error) {
			var a struct{ Path, Content string }
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			c := action.FileEquals(a.Path, []byte(a.Content))
			return &c, nil
		},
	}
	tb, err := harness.NewToolbox(append([]harness.ToolAdapter{tool}, more...)...)
	if err != nil {
		return nil, err
	}
	ws, err := action.NewWorkspace(spec.Root, action.WithBlobs(s, 0))
	if err != nil {
		return nil, err
	}
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	if err != nil {
		return nil, err
	}
	e := &changedEnv{spec: spec, store: s}
	if e.actor, err = harness.CodingActor(cfg, tb); err != nil {
		return nil, err
	}
	e.rt, err = harness.NewRuntime(s, harness.Services{Model: m, Tools: tb, Observer: ws, Workspace: spec.Root, Blobs: s}, cfg)
	return e, err
}

func (e *changedEnv) approve(request string) {
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: request, Approved: true, By: "ana"})
	require.NoError(e.t, err)
	_, err = e.rt.Post(ctx, e.actor, e.spec.Thread, d, "answer-"+request)
	require.NoError(e.t, err)
}

func (e *changedEnv) resume() harness.Outcome {
	out, err := e.rt.Resume(ctx, e.actor, e.spec.Thread)
	require.NoError(e.t, err)
	return out
}

func (e *changedEnv) log() []facts.Fact {
	var out []facts.Fact
	for f, err := range e.store.Read(ctx, e.spec.Thread, 1) {
		require.NoError(e.t, err)
		out = append(out, f)
	}
	return out
}

// changes are the thread's workspace.changed records.
func (e *changedEnv) changes() []facts.WorkspaceChanged {
	var out []facts.WorkspaceChanged
	for _, f := range e.log() {
		if f.Kind == facts.KindWorkspaceChanged {
			c, err := facts.Decode[facts.WorkspaceChanged](f)
			require.NoError(e.t, err)
			out = append(out, c)
		}
	}
	return out
}

// toSecondApproval runs the thread through its first write (approved) up
// to the confirmation of its second.
func (e *changedEnv) toSecondApproval() {
	out, err := e.rt.Start(ctx, e.actor, e.spec.Thread, "two files")
	require.NoError(e.t, err)
	require.Equal(e.t, harness.StatusParked, out.Status)
	e.approve("1-a")
	out = e.resume()
	require.Equal(e.t, harness.StatusParked, out.Status)
	require.Equal(e.t, "2-b", out.Waits[0].RequestID)
	require.Empty(e.t, e.changes(), "nothing changed the workspace but the thread's own write")
}

func newChangedSpec(t *testing.T) changedSpec {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return changedSpec{Dir: t.TempDir(), Root: root, Thread: "t", Marker: filepath.Join(t.TempDir(), "entered")}
}

func openChanged(t *testing.T, spec changedSpec, more ...harness.ToolAdapter) *changedEnv {
	e, err := newChangedEnv(spec, harnesstest.Honest, more...)
	require.NoError(t, err)
	e.t = t
	t.Cleanup(func() { require.NoError(t, e.store.Close()) })
	return e
}

// TestWorkspaceChangedBetweenActions: between two actions of a thread, a
// third party writes the workspace — a person, while the second write
// waits for its approval; or a local MCP server the thread never calls,
// on a timer of its own. The change is recorded before the second
// action's start as workspace.changed, by nobody known, with the path;
// the second action's observation starts from the new state and lists
// only its own write; the log verifies.
func TestWorkspaceChangedBetweenActions(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string // what the third party writes
		// start returns the tools the third party brings and makes it
		// write path, once the thread waits.
		start func(t *testing.T, spec changedSpec) ([]harness.ToolAdapter, func())
	}{
		{"a person edits a file", "notes.txt", func(t *testing.T, spec changedSpec) ([]harness.ToolAdapter, func()) {
			return nil, func() {
				require.NoError(t, os.WriteFile(filepath.Join(spec.Root, "notes.txt"), []byte("edited by hand\n"), 0o644))
			}
		}},
		{"an MCP server that is never called", "server-wrote.txt", func(t *testing.T, spec changedSpec) ([]harness.ToolAdapter, func()) {
			exe, err := os.Executable()
			require.NoError(t, err)
			trigger := filepath.Join(t.TempDir(), "go")
			sb, err := sandbox.Default(spec.Root, spec.Dir)
			require.NoError(t, err)
			client, err := mcp.Connect(ctx, mcp.Servers{"w": {Command: exe, Env: map[string]string{changedServerEnv: trigger}}},
				mcp.Options{Workspace: spec.Root, Sandbox: sb})
			require.NoError(t, err)
			t.Cleanup(func() { client.Close() })
			require.Equal(t, mcp.Connected, client.Status()[0].State, "%+v", client.Status()[0])
			var adapters []harness.ToolAdapter
			for _, t := range client.Tools() {
				adapters = append(adapters, t)
			}
			return adapters, func() {
				// The server looks for the trigger on a timer, and then
				// writes the workspace by itself.
				require.NoError(t, os.WriteFile(trigger, nil, 0o644))
				waitFor(t, filepath.Join(spec.Root, "server-wrote.txt"))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := newChangedSpec(t)
			tools, change := tc.start(t, spec)
			e := openChanged(t, spec, tools...)
			e.toSecondApproval()
			change()
			e.approve("2-b")
			out := e.resume()
			require.Equal(t, harness.StatusDone, out.Status)

			log := e.log()
			var changedAt int
			for i, f := range log {
				if f.Kind == facts.KindWorkspaceChanged {
					require.Zero(t, changedAt, "one workspace.changed")
					changedAt = i
				}
			}
			require.NotZero(t, changedAt, "the change is recorded")
			wc, err := facts.Decode[facts.WorkspaceChanged](log[changedAt])
			require.NoError(t, err)
			next := log[changedAt+1]
			require.Equal(t, facts.KindActionStarted, next.Kind, "recorded just before the action starts")
			require.Equal(t, log[changedAt].Cause, next.Cause, "in the same append, under the claim's key")
			started, err := facts.Decode[facts.ActionStarted](next)
			require.NoError(t, err)

			require.Equal(t, "2-b", wc.ActionID)
			require.Equal(t, facts.ByUnknown, wc.By)
			require.Len(t, wc.Changed, 1)
			require.Equal(t, tc.path, wc.Changed[0].Path)
			require.Empty(t, wc.Changed[0].Before, "added")
			require.NotEmpty(t, wc.Changed[0].After)
			require.Equal(t, started.ObservedBefore, wc.After)

			// It starts where the first action's observation ended.
			first := completionOf(t, log, "1-a")
			require.Equal(t, first.Observation.After, wc.Before)
			require.NotEmpty(t, first.Observation.Manifest, "the listing after is kept")

			// The second action's observation is its own write only.
			second := completionOf(t, log, "2-b")
			require.Equal(t, wc.After, second.Observation.Before)
			require.Len(t, second.Observation.Changed, 1)
			require.Equal(t, "b.txt", second.Observation.Changed[0].Path)
			require.Equal(t, facts.EffectObserved, second.EffectState)

			require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, spec.Thread))
			r, err := e.rt.Thread(e.actor, spec.Thread).Reading(ctx)
			require.NoError(t, err)
			require.Len(t, r.Changed, 1, "the scheduler's reading has it")
			require.Equal(t, tc.path, r.Changed[0].Changed[0].Path)
		})
	}
}

// A workspace that did not change between two actions records nothing;
// neither does a thread's first action, which has nothing to compare
// with.
func TestWorkspaceUnchangedRecordsNothing(t *testing.T) {
	spec := newChangedSpec(t)
	require.NoError(t, os.WriteFile(filepath.Join(spec.Root, "before.txt"), []byte("there before the thread\n"), 0o644))
	e := openChanged(t, spec)
	e.toSecondApproval()
	e.approve("2-b")
	require.Equal(t, harness.StatusDone, e.resume().Status)
	require.Empty(t, e.changes())
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, spec.Thread))
}

// A change found before a call a person denied is recorded before its
// completion: the next action does not inherit it either.
func TestWorkspaceChangedBeforeADenial(t *testing.T) {
	spec := newChangedSpec(t)
	e := openChanged(t, spec)
	e.toSecondApproval()
	require.NoError(t, os.WriteFile(filepath.Join(spec.Root, "notes.txt"), []byte("by hand\n"), 0o644))
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: "2-b", By: "ana", Then: facts.DenyContinue})
	require.NoError(t, err)
	_, err = e.rt.Post(ctx, e.actor, spec.Thread, d, "deny")
	require.NoError(t, err)
	e.resume()
	log := e.log()
	for i, f := range log {
		if f.Kind == facts.KindWorkspaceChanged {
			require.Equal(t, facts.KindActionCompleted, log[i+1].Kind)
			require.Equal(t, f.Cause, log[i+1].Cause)
		}
	}
	cs := e.changes()
	require.Len(t, cs, 1)
	require.Equal(t, "notes.txt", cs[0].Changed[0].Path)
	done := completionOf(t, log, "2-b")
	require.Equal(t, facts.StatusDenied, done.Report.Status)
	require.Equal(t, cs[0].After, done.Observation.Before)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, spec.Thread))
}

// TestWorkspaceChangedSurvivesACrash: the workspace changes, the second
// write is approved, and the process that runs it dies while the write
// runs (a real process, SIGKILLed). workspace.changed was appended with
// action.started, in one append: it is in the log once. Resumed — twice —
// the action is found in doubt, and the change is not recorded again.
func TestWorkspaceChangedSurvivesACrash(t *testing.T) {
	spec := newChangedSpec(t)
	e, err := newChangedEnv(spec, harnesstest.Honest)
	require.NoError(t, err)
	e.t = t
	e.toSecondApproval()
	require.NoError(t, os.WriteFile(filepath.Join(spec.Root, "notes.txt"), []byte("by hand\n"), 0o644))
	e.approve("2-b")
	require.NoError(t, e.store.Close())

	exe, err := os.Executable()
	require.NoError(t, err)
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	child := exec.Command(exe)
	child.Env = append(os.Environ(), changedChildEnv+"="+string(raw))
	child.Stderr = os.Stderr
	require.NoError(t, child.Start())
	waitFor(t, spec.Marker)
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()

	e = openChanged(t, spec)
	kinds := []facts.Kind{}
	for _, f := range e.log() {
		kinds = append(kinds, f.Kind)
	}
	require.Equal(t, []facts.Kind{facts.KindWorkspaceChanged, facts.KindActionStarted}, kinds[len(kinds)-2:], "the child died mid-act")
	for range 2 {
		out := e.resume()
		require.Equal(t, harness.StatusParked, out.Status)
		require.Equal(t, fold.WaitReconcile, out.Waits[0].Kind)
		require.Len(t, e.changes(), 1)
	}
	rec, err := facts.Decode[facts.ActionInterrupted](lastOf(t, e.log(), facts.KindActionInterrupted))
	require.NoError(t, err)
	require.Equal(t, e.changes()[0].After, rec.ObservedBefore, "the action in doubt started from the changed state")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, spec.Thread))
}

// runChangedChild is the crash child: it resumes the thread, whose write
// creates the marker and hangs until the process is killed.
func runChangedChild(raw string) int {
	var spec changedSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "changed child:", err)
		return 2
	}
	e, err := newChangedEnv(spec, func(string, json.RawMessage) (facts.Report, error) {
		if err := os.WriteFile(spec.Marker, nil, 0o644); err != nil {
			return facts.Report{}, err
		}
		select {} // until killed
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "changed child:", err)
		return 2
	}
	_, err = e.rt.Resume(context.Background(), e.actor, spec.Thread)
	fmt.Fprintln(os.Stderr, "changed child: the resume returned:", err)
	return 1
}

// runChangedServer is an MCP server on stdio with one tool, never called
// in the test, that writes server-wrote.txt into its working directory
// (the workspace) by itself: on a timer, once the trigger file exists.
func runChangedServer(trigger string) int {
	srv := sdk.NewServer(&sdk.Implementation{Name: "writes-by-itself", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "noop", Description: "Do nothing."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "nothing"}}}, nil, nil
		})
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if _, err := os.Stat(trigger); err == nil {
				// Whole when it appears (the test waits for it to exist):
				// written aside, then renamed into place.
				if err := os.WriteFile(".server-wrote.tmp", []byte("written by the server on its own\n"), 0o644); err != nil {
					fmt.Fprintln(os.Stderr, "changed server:", err)
				}
				if err := os.Rename(".server-wrote.tmp", "server-wrote.txt"); err != nil {
					fmt.Fprintln(os.Stderr, "changed server:", err)
				}
				return
			}
		}
	}()
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "changed server:", err)
		return 1
	}
	return 0
}

// waitFor waits up to 30 seconds for a file to exist.
func waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within 30s", path)
}

func completionOf(t *testing.T, log []facts.Fact, id string) facts.ActionCompleted {
	t.Helper()
	for _, f := range log {
		if f.Kind == facts.KindActionCompleted {
			c, err := facts.Decode[facts.ActionCompleted](f)
			require.NoError(t, err)
			if c.ActionID == id {
				return c
			}
		}
	}
	t.Fatalf("no completion of %s", id)
	return facts.ActionCompleted{}
}

func lastOf(t *testing.T, log []facts.Fact, kind facts.Kind) facts.Fact {
	t.Helper()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Kind == kind {
			return log[i]
		}
	}
	t.Fatalf("no %s", kind)
	return facts.Fact{}
}

// replay --verify checks a workspace.changed: a copy of a thread whose
// record was altered — a change that does not start from the thread's
// last observation, or one not followed by its action's start — does not
// verify, and says why.
func TestWorkspaceChangedIsVerified(t *testing.T) {
	spec := newChangedSpec(t)
	e := openChanged(t, spec)
	e.toSecondApproval()
	require.NoError(t, os.WriteFile(filepath.Join(spec.Root, "notes.txt"), []byte("by hand\n"), 0o644))
	e.approve("2-b")
	require.Equal(t, harness.StatusDone, e.resume().Status)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, spec.Thread))

	// copyAs appends the thread's facts to thread id, passing each
	// through alter (nil drops it).
	copyAs := func(id string, alter func(f facts.Fact) *facts.Draft) {
		var seq uint64
		var batch []facts.Draft // the facts of one append share its cause
		flush := func() {
			if len(batch) > 0 {
				h, err := e.store.Append(ctx, id, seq, batch...)
				require.NoError(t, err)
				seq, batch = h.Seq, nil
			}
		}
		for _, f := range e.log() {
			if len(batch) > 0 && batch[0].Cause != f.Cause {
				flush()
			}
			if d := alter(f); d != nil {
				batch = append(batch, *d)
			}
		}
		flush()
	}
	same := func(f facts.Fact) *facts.Draft { return &facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data} }
	for _, tc := range []struct {
		name, want string
		alter      func(f facts.Fact) *facts.Draft
	}{
		{"from another state", "starts from", func(f facts.Fact) *facts.Draft {
			if f.Kind != facts.KindWorkspaceChanged {
				return same(f)
			}
			c, err := facts.Decode[facts.WorkspaceChanged](f)
			require.NoError(t, err)
			c.Before = strings.Repeat("0", 64)
			d, err := facts.NewDraft(f.Kind, f.Cause, c)
			require.NoError(t, err)
			return &d
		}},
		{"to another state", "but the action's reading before is", func(f facts.Fact) *facts.Draft {
			if f.Kind != facts.KindWorkspaceChanged {
				return same(f)
			}
			c, err := facts.Decode[facts.WorkspaceChanged](f)
			require.NoError(t, err)
			c.After = strings.Repeat("0", 64)
			d, err := facts.NewDraft(f.Kind, f.Cause, c)
			require.NoError(t, err)
			return &d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "copy-" + strings.ReplaceAll(tc.name, " ", "-")
			copyAs(id, tc.alter)
			err := audit.VerifyLog(ctx, e.store, e.actor, id)
			require.Error(t, err)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
