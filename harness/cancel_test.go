package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
)

// recordingModel is a scripted model that keeps every request it is sent.
type recordingModel struct {
	model.Model
	mu   sync.Mutex // guards reqs
	reqs []model.Request
}

func (m *recordingModel) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.Model.Turn(ctx, req)
}

func (m *recordingModel) requests() []model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]model.Request(nil), m.reqs...)
}

var cancelMarkers atomic.Int64

// cancelEnv is a coding thread whose first turn runs one command in the
// default sandbox, with run_command approved by the tools' policy; the
// command may write its pid file to Out, a directory outside the
// workspace that the sandbox lets it write (so that the pid file is no
// change of the workspace).
type cancelEnv struct {
	root, out string
	store     *thread.PebbleStore
	model     *recordingModel
	rt        *harness.Runtime
	actor     harness.Actor
}

func newCancelEnv(t testing.TB, command func(out string) string) *cancelEnv {
	t.Helper()
	e := &cancelEnv{root: t.TempDir(), out: t.TempDir()}
	root, err := filepath.EvalSymlinks(e.root)
	require.NoError(t, err)
	e.root = root
	spec, err := sandbox.Default(e.root, "")
	require.NoError(t, err)
	spec.Writable = append(spec.Writable, e.out)
	set, err := tools.New(e.root, tools.WithSandbox(spec), tools.WithConfirm(false, tools.RunCommand))
	require.NoError(t, err)
	if err := set.Sandbox().Check(); err != nil {
		t.Skip(err)
	}
	var adapters []harness.ToolAdapter
	for _, tl := range set.Tools() {
		adapters = append(adapters, tl)
	}
	tb, err := harness.NewToolbox(adapters...)
	require.NoError(t, err)
	e.store, err = thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { e.store.Close() })
	args, err := json.Marshal(map[string]string{"command": command(e.out)})
	require.NoError(t, err)
	call, err := json.Marshal(map[string]any{"text": "Running it.", "tool_calls": []map[string]string{{"id": "c", "name": tools.RunCommand, "args": string(args)}}})
	require.NoError(t, err)
	script, err := model.ParseScript("cancel", []byte(string(call)+"\n"+`{"text": "Stopped, as asked."}`+"\n"))
	require.NoError(t, err)
	e.model = &recordingModel{Model: script}
	ws, err := action.NewWorkspace(e.root, action.WithBlobs(e.store, 0))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	e.actor, err = harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	e.rt, err = harness.NewRuntime(e.store, harness.Services{Model: e.model, Tools: tb, Observer: ws, Workspace: e.root, Blobs: e.store}, cfg)
	require.NoError(t, err)
	return e
}

// hostPid is the pid, in this process's PID namespace, of the process of
// the sandboxed command whose command line holds marker and whose pid in
// the command's own namespace is inner (as the command wrote it); false
// when there is none (yet: while the shell execs, its command line may
// read empty).
func hostPid(t testing.TB, marker string, inner int) (int, bool) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), marker) {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(status), "\n") {
			if ns, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(ns)
				if len(f) > 1 && f[len(f)-1] == strconv.Itoa(inner) {
					return pid, true
				}
			}
		}
	}
	return 0, false
}

// cancelMidCommand starts the thread, waits until the command has written
// its pid file, finds the command's process, cancels the Resume, and
// returns the Resume's error with the command's host pid.
func (e *cancelEnv) cancelMidCommand(t *testing.T, marker string) (error, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return e.midCommand(t, ctx, marker, cancel)
}

// midCommand starts the thread under ctx, waits until the command has
// written its pid file, finds the command's process, calls interrupt, and
// returns the Start's error with the command's host pid.
func (e *cancelEnv) midCommand(t testing.TB, ctx context.Context, marker string, interrupt func()) (error, int) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := e.rt.Start(ctx, e.actor, "t1", "Run the long command")
		done <- err
	}()
	pidFile := filepath.Join(e.out, "pid")
	var inner int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		inner, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 60*time.Second, 10*time.Millisecond, "the command never wrote its pid file")
	var pid int
	require.Eventually(t, func() bool {
		var ok bool
		pid, ok = hostPid(t, marker, inner)
		return ok
	}, 30*time.Second, 10*time.Millisecond, "no process with %q in its command line has pid %d in its namespace", marker, inner)
	require.NoError(t, syscall.Kill(pid, 0), "the command runs before the cancel")
	interrupt()
	select {
	case err := <-done:
		return err, pid
	case <-time.After(60 * time.Second):
		t.Fatal("the interrupted Resume did not return")
		return nil, 0
	}
}

// gonePid requires that pid is gone, or is another process now (one
// whose command line does not hold marker).
func gonePid(t testing.TB, pid int, marker string) {
	t.Helper()
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return
	}
	cmdline, rerr := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	require.False(t, rerr == nil && strings.Contains(string(cmdline), marker),
		"the command's process %d outlived the cancelled Resume (kill 0: %v)", pid, err)
}

func interruptedOf(t *testing.T, s thread.Store, id string) facts.ActionInterrupted {
	t.Helper()
	var found []facts.ActionInterrupted
	for f, err := range s.Read(context.Background(), id, 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindActionInterrupted {
			p, err := facts.Decode[facts.ActionInterrupted](f)
			require.NoError(t, err)
			found = append(found, p)
		}
	}
	require.Len(t, found, 1)
	return found[0]
}

// A Resume cancelled while a command runs in the sandbox keeps the
// context contract: the command's processes are gone when it returns, it
// returns the context's error, action.interrupted (not a failed
// completion) records what the runtime observed, and the thread is
// resumable; the next Resume tells the model the call was interrupted —
// not that it failed — and goes on.
func TestResumeCancelledMidCommand(t *testing.T) {
	marker := fmt.Sprintf("3600.%d%03d", os.Getpid()%100000, cancelMarkers.Add(1))
	e := newCancelEnv(t, func(out string) string { return fmt.Sprintf("echo $$ > %s/pid; exec sleep %s", out, marker) })
	err, pid := e.cancelMidCommand(t, marker)
	require.Error(t, err)
	require.ErrorIs(t, err, context.Canceled, "a cancelled Resume returns the context's error")
	gonePid(t, pid, marker)

	kinds := kindsOf(readLog(t, e.store, "t1"))
	require.Equal(t, facts.KindActionInterrupted, kinds[len(kinds)-1], "the log ends with the interruption: %v", kinds)
	require.NotContains(t, kinds, facts.KindActionCompleted, "the caller's cancel is no failure of the action")
	require.NotContains(t, kinds, facts.KindTransitionFailed)
	in := interruptedOf(t, e.store, "t1")
	require.True(t, in.Cancelled)
	require.True(t, in.Unchanged(), "the pid file is outside the workspace: nothing changed (%s → %s, %v)", in.ObservedBefore, in.ObservedNow, in.Changed)
	require.NotNil(t, in.Report)
	require.Contains(t, in.Report.Error, "SIGTERM")
	require.NoError(t, audit.VerifyLog(context.Background(), e.store, e.actor, "t1"))
	require.Len(t, e.model.requests(), 1)

	out, err := e.rt.Resume(context.Background(), e.actor, "t1")
	require.NoError(t, err, "the thread is resumable")
	require.Equal(t, harness.StatusDone, out.Status)
	reqs := e.model.requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, facts.RoleTool, last.Role)
	require.Equal(t, "c", last.ToolCallID)
	require.True(t, strings.HasPrefix(last.Text, "interrupted: the run was cancelled"), last.Text)
	require.Contains(t, last.Text, "nothing changed")
	require.NotContains(t, last.Text, "report: failed")
	require.NoError(t, audit.VerifyLog(context.Background(), e.store, e.actor, "t1"))
}

// A command that changed the workspace before the cancel: the
// interruption records the change the runtime observed, and — its effect
// being something nobody decided — the next Resume parks on reconcile, as
// after a crash, without asking the model.
func TestResumeCancelledAfterAChange(t *testing.T) {
	marker := fmt.Sprintf("3600.%d%03d", os.Getpid()%100000, cancelMarkers.Add(1))
	e := newCancelEnv(t, func(out string) string {
		return fmt.Sprintf("echo half > made.txt; echo $$ > %s/pid; exec sleep %s", out, marker)
	})
	err, pid := e.cancelMidCommand(t, marker)
	require.ErrorIs(t, err, context.Canceled)
	gonePid(t, pid, marker)

	in := interruptedOf(t, e.store, "t1")
	require.True(t, in.Cancelled)
	require.False(t, in.Unchanged())
	require.Len(t, in.Changed, 1, "%v", in.Changed)
	require.Equal(t, "made.txt", in.Changed[0].Path)
	require.NotContains(t, kindsOf(readLog(t, e.store, "t1")), facts.KindActionCompleted)

	out, err := e.rt.Resume(context.Background(), e.actor, "t1")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 1)
	require.Equal(t, fold.WaitReconcile, out.Waits[0].Kind)
	require.Contains(t, out.Waits[0].Summary, "stopped when its run was cancelled")
	require.Len(t, e.model.requests(), 1, "the model is not asked while the effect is open")
	require.NoError(t, audit.VerifyLog(context.Background(), e.store, e.actor, "t1"))
}

// remoteTool is a tool whose effects nobody can observe (a remote
// server's): it works until its context is cancelled.
type remoteTool struct{ started chan struct{} }

func (remoteTool) Name() string                  { return "remote" }
func (remoteTool) Schema() facts.ToolSchema      { return facts.ToolSchema{Name: "remote"} }
func (remoteTool) Capability() action.Capability { return action.Read }
func (remoteTool) Unobserved() bool              { return true }
func (r remoteTool) Execute(ctx context.Context, _ action.Request) (facts.Report, error) {
	close(r.started)
	<-ctx.Done()
	return facts.Report{}, ctx.Err()
}

// A cancelled call whose effect nobody can look at (a remote tool's) is
// one the runtime cannot call harmless: recorded as interrupted, it parks
// the thread on reconcile, as after a crash.
func TestResumeCancelledUnobservedParks(t *testing.T) {
	ctx := context.Background()
	remote := remoteTool{started: make(chan struct{})}
	tb, err := harness.NewToolbox(remote)
	require.NoError(t, err)
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer store.Close()
	script, err := model.ParseScript("test", []byte(`{"tool_calls": [{"id": "r", "name": "remote", "args": "{}"}]}
{"text": "Done."}
`))
	require.NoError(t, err)
	root := t.TempDir()
	ws, err := action.NewWorkspace(root)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tb, Observer: ws, Workspace: root}, cfg)
	require.NoError(t, err)

	cctx, cancel := context.WithCancel(ctx)
	go func() {
		<-remote.started
		cancel()
	}()
	_, err = rt.Start(cctx, actor, "t1", "Call it")
	require.ErrorIs(t, err, context.Canceled)
	in := interruptedOf(t, store, "t1")
	require.True(t, in.Cancelled)
	require.Empty(t, in.ObservedNow, "nobody looked")

	out, err := rt.Resume(ctx, actor, "t1")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 1)
	require.Equal(t, fold.WaitReconcile, out.Waits[0].Kind)
	require.Contains(t, out.Waits[0].Summary, "could not be observed")
}
