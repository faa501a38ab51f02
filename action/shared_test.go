package action

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// A process dies while its command runs; meanwhile another process's
// thread writes b.txt. The next holder finds the command in doubt: its
// record (action.interrupted) names b.txt as the other thread's write,
// through the shared ledger file that still holds the dead command's
// start, and keeps c.txt (which the command wrote) as its own or
// nobody's.
func TestInDoubtNamesOtherThreads(t *testing.T) {
	ctx := context.Background()
	root, file := t.TempDir(), filepath.Join(t.TempDir(), "ledger")
	blobs := &memBlobs{m: map[string][]byte{}}
	boundary := func(thread string) *Boundary {
		ws, err := NewWorkspace(root, WithBlobs(blobs, 0))
		require.NoError(t, err)
		t.Cleanup(func() { ws.Close() })
		return &Boundary{Observer: ws, Granted: []Capability{Write, Execute}, Root: root, Blobs: blobs, Ledger: &Ledger{Shared: file}, Thread: thread}
	}
	// The first process: its command begins, and the process dies.
	a := boundary("ta")
	cmd := Request{ActionID: "1-c", Capability: Execute, Adapter: "run_command", Payload: json.RawMessage(`{"command":"make"}`)}
	bg, refused := a.Begin(ctx, cmd)
	require.Nil(t, refused)
	a.Ledger.begin(a.Thread, cmd, nil) // as Finish does before it runs the adapter

	// The second process's thread writes b.txt meanwhile.
	b := boundary("tb")
	w := Request{ActionID: "2-w", Capability: Write, Adapter: "stepper", Payload: json.RawMessage(`{"path":"b.txt"}`)}
	bgw, refused := b.Begin(ctx, w)
	require.Nil(t, refused)
	end := b.Finish(ctx, w, bgw, writer(root, "b.txt", "b"))
	require.Nil(t, end.Completed.Observation.Others)
	put(t, root, "c.txt", "made", 0o644) // the command's, before it died

	// The next holder of ta, a third process, finds the command in doubt.
	rec, err := boundary("ta").Interrupted(ctx, bg.Started)
	require.NoError(t, err)
	require.Len(t, rec.Changed, 2)
	require.Equal(t, []facts.OtherChange{{Thread: "tb", Action: "2-w", Paths: []string{"b.txt"}}}, rec.Others)
	require.Nil(t, rec.Unrecorded)
}

// A process whose output goes to run.log in the workspace (`harness run
// > run.log`) dies while its command runs. Its observations left run.log
// out (WithOwnFiles); the next holder, whose output goes elsewhere, finds
// the command in doubt: run.log is not the command's change, and is said
// apart (Own), while what the command did write (c.txt) is still its
// change. A file the command put in the log's place is the command's.
func TestInDoubtLeavesOutTheDeadProcessOutput(t *testing.T) {
	ctx := context.Background()
	for _, replaced := range []bool{false, true} {
		root, file := t.TempDir(), filepath.Join(t.TempDir(), "ledger")
		blobs := &memBlobs{m: map[string][]byte{}}
		log, err := os.Create(filepath.Join(root, "run.log"))
		require.NoError(t, err)
		defer log.Close()
		_, err = log.WriteString("thread t1 started\n")
		require.NoError(t, err)
		boundary := func(opts ...WorkspaceOption) *Boundary {
			ws, err := NewWorkspace(root, append(opts, WithBlobs(blobs, 0))...)
			require.NoError(t, err)
			t.Cleanup(func() { ws.Close() })
			return &Boundary{Observer: ws, Granted: []Capability{Write, Execute}, Root: root, Blobs: blobs, Ledger: &Ledger{Shared: file}, Thread: "t1"}
		}
		a := boundary(WithOwnFiles(log))
		cmd := Request{ActionID: "1-c", Capability: Execute, Adapter: "run_command", Payload: json.RawMessage(`{"command":"make"}`)}
		bg, refused := a.Begin(ctx, cmd)
		require.Nil(t, refused)
		a.Ledger.begin(a.Thread, cmd, ownFilesOf(a.Observer)) // as Finish does before it runs the adapter
		_, err = log.WriteString("action.started 1-c\n")
		require.NoError(t, err)
		put(t, root, "c.txt", "made", 0o644) // the command's, before it died
		if replaced {
			require.NoError(t, os.Remove(filepath.Join(root, "run.log")))
			put(t, root, "run.log", "the command's own\n", 0o644)
		}

		rec, err := boundary().Interrupted(ctx, bg.Started)
		require.NoError(t, err)
		if replaced {
			require.Equal(t, []string{"c.txt", "run.log"}, changedPaths(rec.Changed), "a file in the log's place is the command's")
			require.Nil(t, rec.Own)
			continue
		}
		require.Equal(t, []string{"c.txt"}, changedPaths(rec.Changed))
		require.Equal(t, []string{"run.log"}, rec.Own)
		require.NotEqual(t, rec.ObservedBefore, rec.ObservedNow, "the reading now is the whole workspace, as this process sees it")
	}
}
