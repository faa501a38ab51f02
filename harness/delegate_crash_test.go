package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// treeCrashEnv, when set, makes TestTreeCrashChild run the tree as the
// child process of TestTreeCrash; its value is a treeCrashSpec in JSON.
const treeCrashEnv = "HARNESS_TREE_CRASH_CHILD"

// treeCrashSpec is what a crash child runs: the tree of thread "p" in the
// store directory Dir, the tools' runs appended to Runs. After the append
// of a fact of kind Kind to thread Thread it says so and then hangs, so
// that its killer's SIGKILL lands right there.
type treeCrashSpec struct {
	Dir, Runs    string
	Thread, Kind string
}

// treeCrashScript: the parent delegates two reads at once, and a child
// reads and answers; no confirmation, so that one resume runs it all.
const treeCrashScript = `{"text": "Two at once.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read a\",\"tools\":[\"read_file\"]}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Read b\",\"tools\":[\"read_file\"]}"}]}
{"text": "both read"}
{"thread": "1-d1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"thread": "1-d1", "text": "a holds 1"}
{"thread": "1-d2", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b\"}"}]}
{"thread": "1-d2", "text": "b holds 2"}`

// treeCrashRuntime is the tree's runtime on store: read_file appends
// "start …" and "end …" lines to runs.
func treeCrashRuntime(t testing.TB, store thread.Store, runs string) (*harness.Runtime, harness.Actor) {
	t.Helper()
	m, err := model.ParseScript("crash-tree", []byte(treeCrashScript))
	require.NoError(t, err)
	tools, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			if err := appendLine(runs, "start read_file "+string(args)); err != nil {
				return facts.Report{}, err
			}
			if err := appendLine(runs, "end read_file "+string(args)); err != nil {
				return facts.Report{}, err
			}
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "1"}, nil
		}})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.Compose(cfg, harness.System(), harness.Tools(tools), harness.Budget(), harness.Infer(harness.Scheduler()), harness.Delegate(nil))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(t, err)
	return rt, actor
}

// TestTreeCrash kills a process driving a tree at each point of a
// delegation — before the spawn is recorded, after it, after the child's
// first fact, during the child, after its last fact (before its report
// is posted), after the report — and then finishes the tree in another
// runtime. Every time there is one child per delegation, one end and one
// report each, every tool ran once, and the tree verifies, both right
// after the kill and at the end.
func TestTreeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per point")
	}
	points := []struct{ name, thread, kind string }{
		{"before the spawn is recorded", "p", string(facts.KindModelTurn)},
		{"after the spawn is recorded", "p", string(facts.KindChildSpawned)},
		{"after the child's first fact", "p.1-d1", string(facts.KindThreadSpawned)},
		{"during the child", "p.1-d1", string(facts.KindActionCompleted)},
		{"after the child's last fact, before its report", "p.1-d1", string(facts.KindThreadEnded)},
		{"after the first report, before the second", "p", string(facts.KindChildReported)},
		{"after the second child's last fact", "p.1-d2", string(facts.KindThreadEnded)},
	}
	for _, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			ctx := context.Background()
			spec := treeCrashSpec{Dir: t.TempDir(), Runs: filepath.Join(t.TempDir(), "runs"), Thread: pt.thread, Kind: pt.kind}
			killTreeChild(t, spec)

			s, err := thread.OpenPebble(spec.Dir)
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			rt, actor := treeCrashRuntime(t, s, spec.Runs)
			log := readLog(t, s, pt.thread)
			at := slices.IndexFunc(log, func(f facts.Fact) bool { return string(f.Kind) == pt.kind })
			require.GreaterOrEqual(t, at, 0)
			if pt.kind == string(facts.KindThreadSpawned) {
				require.Len(t, log, 2, "the kill landed right after the child's creation: its spawn record and its task")
			} else {
				for _, f := range log[at:] {
					require.Equal(t, log[at].Cause, f.Cause, "the kill landed right after the append of the %s of %s", pt.kind, pt.thread)
				}
			}
			require.NoError(t, audit.VerifyLog(ctx, s, actor, "p"), "the tree verifies after the kill")

			out, err := rt.Resume(ctx, actor, "p")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status)
			require.NoError(t, audit.VerifyLog(ctx, s, actor, "p"))
			plog := readLog(t, s, "p")
			requireCausesOnce(t, plog)
			require.Equal(t, 2, countKind(plog, facts.KindChildSpawned), "one spawn per delegation")
			require.Equal(t, 2, countKind(plog, facts.KindChildReported), "one report per child")
			heads, err := s.Threads(ctx, thread.ThreadsPage{})
			require.NoError(t, err)
			require.Len(t, heads, 3, "the parent and one child per delegation")
			for _, id := range []string{"p.1-d1", "p.1-d2"} {
				clog := readLog(t, s, id)
				requireCausesOnce(t, clog)
				require.Equal(t, 1, countKind(clog, facts.KindThreadSpawned), id)
				require.Equal(t, 1, countKind(clog, facts.KindThreadEnded), id)
				require.Equal(t, facts.KindThreadEnded, clog[len(clog)-1].Kind, id)
			}
			starts, ends := readRuns(t, spec.Runs)
			require.Equal(t, map[string]int{`read_file {"path":"a"}`: 1, `read_file {"path":"b"}`: 1}, ends, "every tool ran once")
			require.Equal(t, ends, starts)
		})
	}
}

// killTreeChild runs a crash child on spec and SIGKILLs it once it says
// it appended the fact spec names.
func killTreeChild(t *testing.T, spec treeCrashSpec) {
	t.Helper()
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTreeCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), treeCrashEnv+"="+string(raw))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	want := "event hang " + spec.Kind + " " + spec.Thread
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if sc.Text() == want && !ok {
				ok = true
				found <- true
			}
		}
		if !ok {
			found <- false
		}
	}()
	select {
	case ok := <-found:
		require.True(t, ok, "the child ended without appending %s to %s:\n%s", spec.Kind, spec.Thread, stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the child never appended %s to %s", spec.Kind, spec.Thread)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the child was killed: %v", err)
	ws, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "killed by SIGKILL: %v\n%s", err, stderr.String())
}

// TestTreeCrashChild is the child of TestTreeCrash.
func TestTreeCrashChild(t *testing.T) {
	raw := os.Getenv(treeCrashEnv)
	if raw == "" {
		t.Skip("the child of TestTreeCrash; runs only when TestTreeCrash starts it")
	}
	var spec treeCrashSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	s, err := thread.OpenPebble(spec.Dir)
	require.NoError(t, err)
	rt, actor := treeCrashRuntime(t, hanging{Store: s, spec: spec}, spec.Runs)
	_, err = rt.Start(context.Background(), actor, "p", "Read a and b")
	require.NoError(t, err)
	event("done")
}

// hanging is the crash child's store: after the append the spec names
// it says so and hangs until it is killed.
type hanging struct {
	thread.Store
	spec treeCrashSpec
}

func (h hanging) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	head, err := h.Store.Append(ctx, id, after, drafts...)
	if err == nil && id == h.spec.Thread && slices.ContainsFunc(drafts, func(d facts.Draft) bool { return string(d.Kind) == h.spec.Kind }) {
		event("hang %s %s", h.spec.Kind, id)
		time.Sleep(time.Minute)
	}
	return head, err
}
