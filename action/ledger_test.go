package action_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// stepper is an adapter that runs its steps in order.
type stepper struct{ steps func() }

func (s stepper) Name() string { return "stepper" }
func (s stepper) Execute(context.Context, action.Request) (facts.Report, error) {
	s.steps()
	return facts.Report{Status: facts.StatusSucceeded}, nil
}

func changedPaths(o facts.Observation) []string {
	var out []string
	for _, c := range o.Changed {
		out = append(out, c.Path)
	}
	return out
}

// Two threads share a directory and their actions overlap in time: A
// writes x.txt, B writes y.txt, each while the other runs. Each observation
// sees both files change, and lists the other's as the other's — by
// thread and action — and nothing as unrecorded; a change no action
// names (z.txt, written from outside) is unrecorded.
func TestOverlappingThreadsTellTheirChangesApart(t *testing.T) {
	forLedgers(t, testOverlapping)
}

func testOverlapping(t *testing.T, ledgerOf func(thread string) *action.Ledger) {
	ctx := context.Background()
	root := t.TempDir()
	boundary := func(thread string) *action.Boundary {
		ws, err := action.NewWorkspace(root)
		require.NoError(t, err)
		t.Cleanup(func() { ws.Close() })
		return &action.Boundary{Observer: ws, Granted: []action.Capability{action.Write}, Root: root, Ledger: ledgerOf(thread), Thread: thread}
	}
	a, b := boundary("thread-a"), boundary("thread-b")
	req := func(id, path string) action.Request {
		p, err := json.Marshal(map[string]string{"path": path, "content": id})
		require.NoError(t, err)
		return action.Request{ActionID: id, Capability: action.Write, Adapter: "stepper", Payload: p}
	}
	write := func(name string) {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(name), 0o644))
	}

	aRunning, bBegan, aWrote, bWrote, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var endA, endB action.Ended
	go func() {
		defer close(aDone)
		r := req("act-a", "x.txt")
		bg, refused := a.Begin(ctx, r)
		require.Nil(t, refused)
		endA = a.Finish(ctx, r, bg, stepper{func() {
			close(aRunning)
			<-bBegan
			write("x.txt")
			close(aWrote)
			<-bWrote
			write("z.txt") // nobody's action
		}})
	}()
	<-aRunning
	r := req("act-b", "y.txt")
	bg, refused := b.Begin(ctx, r)
	require.Nil(t, refused)
	endB = b.Finish(ctx, r, bg, stepper{func() {
		close(bBegan)
		<-aWrote
		write("y.txt")
		close(bWrote)
		<-aDone // B still runs while A is observed
	}})

	oa, ob := endA.Completed.Observation, endB.Completed.Observation
	require.ElementsMatch(t, []string{"x.txt", "y.txt", "z.txt"}, changedPaths(oa), "A sees everything that changed")
	require.Equal(t, []facts.OtherChange{{Thread: "thread-b", Action: "act-b", Paths: []string{"y.txt"}, Running: true}}, oa.Others)
	require.Equal(t, []string{"z.txt"}, oa.Unrecorded)

	require.ElementsMatch(t, []string{"x.txt", "y.txt", "z.txt"}, changedPaths(ob), "B sees everything that changed")
	require.Equal(t, []facts.OtherChange{{Thread: "thread-a", Action: "act-a", Paths: []string{"x.txt"}}}, ob.Others)
	require.Equal(t, []string{"z.txt"}, ob.Unrecorded)

	// Without a ledger the same observation blames nobody: no others.
	c := &action.Boundary{Observer: a.Observer, Granted: []action.Capability{action.Write}, Root: root}
	r = req("act-c", "w.txt")
	bg, _ = c.Begin(ctx, r)
	end := c.Finish(ctx, r, bg, stepper{func() { write("w.txt") }})
	require.Nil(t, end.Completed.Observation.Others)
	require.Nil(t, end.Completed.Observation.Unrecorded)
}

// A command of another thread (its request names no path) that is still
// running when a path changes is named as running; once observed, what
// it saw change to the same content is its, too.
func TestOtherThreadsCommand(t *testing.T) { forLedgers(t, testOtherThreadsCommand) }

func testOtherThreadsCommand(t *testing.T, ledgerOf func(thread string) *action.Ledger) {
	ctx := context.Background()
	root := t.TempDir()
	ws, err := action.NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	a := &action.Boundary{Observer: ws, Granted: []action.Capability{action.Write, action.Execute}, Root: root, Ledger: ledgerOf("a"), Thread: "a"}
	ws2, err := action.NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { ws2.Close() })
	b := &action.Boundary{Observer: ws2, Granted: []action.Capability{action.Write, action.Execute}, Root: root, Ledger: ledgerOf("b"), Thread: "b"}

	started, aRunning, wrote, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var endB action.Ended
	go func() {
		defer close(aDone)
		<-started
		r := action.Request{ActionID: "write", Capability: action.Write, Adapter: "stepper", Payload: json.RawMessage(`{"path":"mine.txt"}`)}
		bg, _ := a.Begin(ctx, r)
		end := a.Finish(ctx, r, bg, stepper{func() {
			close(aRunning)
			require.NoError(t, os.WriteFile(filepath.Join(root, "mine.txt"), []byte("a"), 0o644))
			<-wrote
		}})
		require.Equal(t, []facts.OtherChange{{Thread: "b", Action: "cmd", Paths: []string{"built.o"}, Running: true}}, end.Completed.Observation.Others)
		require.Nil(t, end.Completed.Observation.Unrecorded)
	}()
	r := action.Request{ActionID: "cmd", Capability: action.Execute, Adapter: "stepper", Payload: json.RawMessage(`{"command":"make"}`)}
	bg, _ := b.Begin(ctx, r)
	endB = b.Finish(ctx, r, bg, stepper{func() {
		close(started)
		<-aRunning
		require.NoError(t, os.WriteFile(filepath.Join(root, "built.o"), []byte("o"), 0o644))
		close(wrote)
		<-aDone
	}})
	ob := endB.Completed.Observation
	require.Equal(t, []facts.OtherChange{{Thread: "a", Action: "write", Paths: []string{"mine.txt"}}}, ob.Others, "the write named its path")
	require.Nil(t, ob.Unrecorded, "a command names nothing: what is not another's is its own or nobody's")
}

// forLedgers runs test with the threads' boundaries on one Ledger (the
// threads of one process), and on a Ledger each sharing one file (the
// threads of two processes: see TestThreadsOfTwoProcessesNameEachOther
// for real ones).
func forLedgers(t *testing.T, test func(*testing.T, func(string) *action.Ledger)) {
	t.Run("one process", func(t *testing.T) {
		l := &action.Ledger{}
		test(t, func(string) *action.Ledger { return l })
	})
	t.Run("shared file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "ledger")
		test(t, func(string) *action.Ledger { return &action.Ledger{Shared: file} })
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Empty(t, b, "emptied once no action runs")
	})
}
