package harness_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// removeScript has a command remove d/f.txt, which an undo puts back.
const removeScript = `{"tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"rm d/f.txt\"}"}]}
{"text": "Done."}`

// newRemovedEnv runs a thread that removed d/f.txt ("mine").
func newRemovedEnv(t *testing.T) *stockEnv {
	t.Helper()
	e := newStockEnv(t, removeScript)
	require.NoError(t, os.Mkdir(filepath.Join(e.root, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "d", "f.txt"), []byte("mine\n"), 0o644))
	require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
	require.Equal(t, "(absent)", e.read("d/f.txt"))
	return e
}

// An undo never writes through a parent directory that became a symbolic
// link: not outside the workspace, and not over another file inside it.
func TestUndoRefusesALinkedParent(t *testing.T) {
	t.Run("outside", func(t *testing.T) {
		e := newRemovedEnv(t)
		outside := t.TempDir()
		require.NoError(t, os.Remove(filepath.Join(e.root, "d")))
		require.NoError(t, os.Symlink(outside, filepath.Join(e.root, "d")))

		_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.ErrorIs(t, err, harness.ErrUndoRefused)
		require.ErrorContains(t, err, "d/f.txt: its parent directory d is a symbolic link")
		_, err = os.Lstat(filepath.Join(outside, "f.txt"))
		require.ErrorIs(t, err, os.ErrNotExist, "nothing was written outside the workspace")
	})
	t.Run("inside", func(t *testing.T) {
		e := newRemovedEnv(t)
		require.NoError(t, os.Mkdir(filepath.Join(e.root, "e"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.root, "e", "f.txt"), []byte("someone else's\n"), 0o644))
		require.NoError(t, os.Remove(filepath.Join(e.root, "d")))
		require.NoError(t, os.Symlink("e", filepath.Join(e.root, "d")))

		head, err := e.store.Head(ctx, "t")
		require.NoError(t, err)
		_, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.ErrorIs(t, err, harness.ErrUndoRefused)
		require.ErrorContains(t, err, "d/f.txt: its parent directory d is a symbolic link")
		require.Equal(t, "someone else's\n", e.read("e/f.txt"))
		after, err := e.store.Head(ctx, "t")
		require.NoError(t, err)
		require.Equal(t, head.Seq, after.Seq, "nothing was appended")
	})
	t.Run("plain", func(t *testing.T) {
		e := newRemovedEnv(t)
		_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "mine\n", e.read("d/f.txt"))
	})
}

// commandScript has the model run one shell command, then finish.
func commandScript(command string) string {
	return `{"tool_calls": [{"id": "c", "name": "run_command", "args": ` + strconv.Quote(`{"command":`+strconv.Quote(command)+`}`) + `}]}
{"text": "Done."}`
}

// commandsScript has the model run shell commands, one action each, then
// finish.
func commandsScript(commands ...string) string {
	calls := ""
	for i, c := range commands {
		if i > 0 {
			calls += ", "
		}
		calls += `{"id": "c` + strconv.Itoa(i) + `", "name": "run_command", "args": ` + strconv.Quote(`{"command":`+strconv.Quote(c)+`}`) + `}`
	}
	return `{"tool_calls": [` + calls + `]}
{"text": "Done."}`
}

// writeRunScript has the model write run.sh, then finish.
const writeRunScript = `{"tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"run.sh\",\"content\":\"echo new\\n\"}"}]}
{"text": "Done."}`

// newModeEnv is a stock environment whose workspace also holds run.sh
// ("echo old\n") with permission bits perm, and whose thread t has run
// script.
func newModeEnv(t *testing.T, script string, perm os.FileMode) *stockEnv {
	t.Helper()
	e := newStockEnv(t, script)
	p := filepath.Join(e.root, "run.sh")
	require.NoError(t, os.WriteFile(p, []byte("echo old\n"), perm))
	require.NoError(t, os.Chmod(p, perm)) // not less the umask
	require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
	return e
}

func (e *stockEnv) perm(rel string) os.FileMode {
	e.t.Helper()
	fi, err := os.Lstat(filepath.Join(e.root, rel))
	require.NoError(e.t, err)
	return fi.Mode().Perm()
}

// observed is every path change the runtime observed in thread id's
// completed actions.
func (e *stockEnv) observed(id string) []facts.PathChange {
	e.t.Helper()
	var out []facts.PathChange
	for f, err := range e.store.Read(ctx, id, 1) {
		require.NoError(e.t, err)
		if f.Kind == facts.KindActionCompleted {
			p, err := facts.Decode[facts.ActionCompleted](f)
			require.NoError(e.t, err)
			out = append(out, p.Observation.Changed...)
		}
	}
	return out
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// A command that only changes a file's mode (chmod +x) is observed with
// the modes, and an undo puts the mode back, content untouched, without
// needing the file's bytes.
func TestUndoRestoresAModeOnlyChange(t *testing.T) {
	e := newModeEnv(t, commandScript("chmod +x run.sh"), 0o644)
	require.Equal(t, os.FileMode(0o755), e.perm("run.sh"))
	require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo old\n"), BeforeMode: 0o644, AfterMode: 0o755}},
		e.observed("t"))
	require.Equal(t, "observed run.sh (mode 0644 → 0755)",
		harness.DescribeObservation(facts.Observation{Available: true, Before: "a", After: "b", Changed: e.observed("t")}))

	plan, err := harness.PlanUndo(ctx, e.store, e.rt.Services, "t", 0)
	require.NoError(t, err)
	require.Len(t, plan.Steps, 1)
	s := plan.Steps[0]
	require.Equal(t, harness.UndoStep{Path: "run.sh", Left: digest("echo old\n"), Restore: digest("echo old\n"), LeftMode: 0o755, RestoreMode: 0o644, Seqs: s.Seqs}, s)
	require.Equal(t, os.FileMode(0o755), e.perm("run.sh"), "a plan changes nothing")

	_, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), e.perm("run.sh"))
	require.Equal(t, "echo old\n", e.read("run.sh"))
	last := lastFact(t, e.store, "t")
	rec, err := facts.Decode[facts.WorkspaceRestored](last)
	require.NoError(t, err)
	require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo old\n"), BeforeMode: 0o755, AfterMode: 0o644}}, rec.Restored)
	require.Equal(t, "undo by ana restored run.sh (mode 0755 → 0644) to how they were at seq 0", harness.Describe(last))
	require.NoError(t, harness.VerifyLog(ctx, e.store, e.stock.Actor, "t"))

	plan, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
	require.NoError(t, err)
	require.Empty(t, plan.Steps, "undoing again finds nothing to do")
}

// A file an action rewrote, or replaced with a file of another mode, or
// removed, comes back with the content and the mode it had.
func TestUndoRestoresTheModeWithTheContent(t *testing.T) {
	t.Run("write_file over an executable", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o755)
		require.Equal(t, "echo new\n", e.read("run.sh"))
		require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo new\n"), BeforeMode: 0o755, AfterMode: 0o755}},
			e.observed("t"))

		_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "echo old\n", e.read("run.sh"))
		require.Equal(t, os.FileMode(0o755), e.perm("run.sh"))
	})
	t.Run("a command replaces an executable with a plain file", func(t *testing.T) {
		e := newModeEnv(t, commandScript("rm run.sh && echo echo new > run.sh && chmod 0640 run.sh"), 0o755)
		require.Equal(t, "echo new\n", e.read("run.sh"))
		require.Equal(t, os.FileMode(0o640), e.perm("run.sh"))
		require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo new\n"), BeforeMode: 0o755, AfterMode: 0o640}},
			e.observed("t"))
		require.Contains(t, harness.DescribeObservation(facts.Observation{Available: true, Before: "a", After: "b", Changed: e.observed("t")}),
			"run.sh (modified, mode 0755 → 0640)")

		_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "echo old\n", e.read("run.sh"))
		require.Equal(t, os.FileMode(0o755), e.perm("run.sh"))
	})
	t.Run("a command removes an executable", func(t *testing.T) {
		e := newModeEnv(t, commandScript("rm run.sh"), 0o750)
		require.Equal(t, "(absent)", e.read("run.sh"))

		_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "echo old\n", e.read("run.sh"))
		require.Equal(t, os.FileMode(0o750), e.perm("run.sh"), "recreated with its mode, not 0644")
	})
}

// An undo refuses, naming the path and changing nothing, when a file's
// owner-execute bit — the part of a mode the observer tracks — is no
// longer the one the thread left, or when only its content is back.
func TestUndoRefusesAModeChangedSince(t *testing.T) {
	refused := func(t *testing.T, e *stockEnv, left, now uint32, want string) {
		t.Helper()
		head, err := e.store.Head(ctx, "t")
		require.NoError(t, err)
		_, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.ErrorIs(t, err, harness.ErrUndoRefused)
		var ue *harness.UndoError
		require.ErrorAs(t, err, &ue)
		require.Len(t, ue.Conflicts, 1)
		require.Equal(t, "run.sh", ue.Conflicts[0].Path)
		require.Equal(t, left, ue.Conflicts[0].LeftMode)
		require.Equal(t, now, ue.Conflicts[0].NowMode)
		require.ErrorContains(t, err, want)
		after, err := e.store.Head(ctx, "t")
		require.NoError(t, err)
		require.Equal(t, head.Seq, after.Seq, "nothing was appended")
	}
	t.Run("after a content change", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o755)
		require.NoError(t, os.Chmod(filepath.Join(e.root, "run.sh"), 0o644))
		refused(t, e, 0o755, 0o644, "run.sh: its mode changed since the thread last touched it at seq")
		require.ErrorContains(t, func() error { _, err := harness.PlanUndo(ctx, e.store, e.rt.Services, "t", 0); return err }(),
			"(it left mode 0755, it has mode 0644 now)")
		require.Equal(t, "echo new\n", e.read("run.sh"), "nothing was changed")
		require.Equal(t, os.FileMode(0o644), e.perm("run.sh"))
	})
	t.Run("the content put back by hand, not the mode", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o755)
		p := filepath.Join(e.root, "run.sh")
		require.NoError(t, os.WriteFile(p, []byte("echo old\n"), 0o644))
		require.NoError(t, os.Chmod(p, 0o644))
		refused(t, e, 0o755, 0o644, "run.sh: its content is back as it was at seq 0, but not its mode (it had mode 0755 then, it has mode 0644 now); set the mode by hand")
		require.Equal(t, os.FileMode(0o644), e.perm("run.sh"))
	})
	t.Run("the mode put back by hand", func(t *testing.T) {
		e := newModeEnv(t, commandScript("chmod +x run.sh"), 0o644)
		require.NoError(t, os.Chmod(filepath.Join(e.root, "run.sh"), 0o644))
		plan, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Empty(t, plan.Steps, "already as it was")
	})
}

// The observer tracks only the owner-execute bit of a mode, so a change
// of the other bits since is no conflict: the content (and owner-x) put
// back by hand is as it was, and a file's group and other bits tightened
// since are kept, not loosened, when its mode is restored.
func TestUndoComparesWhatTheObserverTracks(t *testing.T) {
	t.Run("a file made private, then undone", func(t *testing.T) {
		// chmod 600 is no observed change: owner-x did not change.
		e := newStockEnv(t, commandsScript("echo secret > key.txt", "chmod 600 key.txt"))
		require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
		require.Equal(t, os.FileMode(0o600), e.perm("key.txt"))
		plan, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Len(t, plan.Steps, 1)
		require.Equal(t, "(absent)", e.read("key.txt"))
	})
	t.Run("the content put back by hand with another umask", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o644)
		p := filepath.Join(e.root, "run.sh")
		require.NoError(t, os.WriteFile(p, []byte("echo old\n"), 0o664))
		require.NoError(t, os.Chmod(p, 0o664))
		plan, err := harness.PlanUndo(ctx, e.store, e.rt.Services, "t", 0)
		require.NoError(t, err)
		require.Empty(t, plan.Steps, "already as it was")
	})
	t.Run("group and other bits tightened since are kept", func(t *testing.T) {
		e := newModeEnv(t, commandScript("chmod +x run.sh"), 0o644)
		require.NoError(t, os.Chmod(filepath.Join(e.root, "run.sh"), 0o700))
		plan, err := harness.PlanUndo(ctx, e.store, e.rt.Services, "t", 0)
		require.NoError(t, err)
		require.Len(t, plan.Steps, 1)
		require.Equal(t, uint32(0o600), plan.Steps[0].RestoreMode, "the plan says what will be set")
		_, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), e.perm("run.sh"))
		rec, err := facts.Decode[facts.WorkspaceRestored](lastFact(t, e.store, "t"))
		require.NoError(t, err)
		require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo old\n"), BeforeMode: 0o755, AfterMode: 0o600}}, rec.Restored)
		plan, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Empty(t, plan.Steps, "undoing again finds nothing to do")
	})
}

// A regular file the thread replaced with a symlink whose target hashes
// like the file's content is restored as a file — its content written
// again, not its mode changed on whatever is there.
func TestUndoRestoresAFileTurnedIntoALink(t *testing.T) {
	for name, script := range map[string]string{
		"in one action":  commandScript("rm conf && ln -s tgt conf"),
		"in two actions": commandsScript("printf y > conf", "rm conf && ln -s tgt conf"),
	} {
		t.Run(name, func(t *testing.T) {
			e := newStockEnv(t, script)
			p := filepath.Join(e.root, "conf")
			require.NoError(t, os.WriteFile(p, []byte("tgt"), 0o640))
			require.NoError(t, os.Chmod(p, 0o640))
			require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
			target, err := os.Readlink(p)
			require.NoError(t, err)
			require.Equal(t, "tgt", target)

			plan, err := harness.PlanUndo(ctx, e.store, e.rt.Services, "t", 0)
			require.NoError(t, err)
			require.Len(t, plan.Steps, 1)
			require.False(t, plan.Steps[0].ModeOnly())
			_, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
			require.NoError(t, err)
			fi, err := os.Lstat(p)
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular())
			require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
			require.Equal(t, "tgt", e.read("conf"))

			plan, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
			require.NoError(t, err)
			require.Empty(t, plan.Steps, "undoing again finds nothing to do")
		})
	}
}

// A log written before modes were recorded (path changes without modes)
// is undone as it always was: a change of mode alone is not undone, a
// mode is never checked, and a restored file keeps the mode it has, or
// gets 0644 when it is recreated.
func TestUndoOfALogWithoutModes(t *testing.T) {
	e := newStockEnv(t, removeScript)
	svc := e.rt.Services
	put := func(rel, content string, perm os.FileMode) {
		p := filepath.Join(e.root, rel)
		require.NoError(t, os.WriteFile(p, []byte(content), perm))
		require.NoError(t, os.Chmod(p, perm))
	}
	for _, s := range []string{"v1\n", "gone\n"} {
		d, err := svc.Blobs.PutBlob(ctx, []byte(s))
		require.NoError(t, err)
		require.Equal(t, digest(s), d)
	}
	// What the old runtime saw: a chmod +x (digests equal), a rewrite
	// v1 → v2, and a removal — and now the files are as it left them, but
	// for modes changed since.
	put("x.sh", "echo\n", 0o755)
	put("conf", "v2\n", 0o600)
	old := facts.ActionCompleted{ActionID: "1-c", Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectObserved,
		Observation: facts.Observation{Available: true, Before: "h0", After: "h1", Changed: []facts.PathChange{
			{Path: "conf", Before: digest("v1\n"), After: digest("v2\n")},
			{Path: "gone.txt", Before: digest("gone\n")},
			{Path: "x.sh", Before: digest("echo\n"), After: digest("echo\n")},
		}}}
	d, err := facts.NewDraft(facts.KindActionCompleted, "tool/execute/c", old)
	require.NoError(t, err)
	_, err = e.store.Append(ctx, "old", 0, d)
	require.NoError(t, err)

	plan, err := harness.Undo(ctx, e.store, svc, "old", 0, "ana")
	require.NoError(t, err)
	require.Equal(t, []harness.UndoStep{
		{Path: "conf", Left: digest("v2\n"), Restore: digest("v1\n"), Seqs: []uint64{1}},
		{Path: "gone.txt", Restore: digest("gone\n"), Seqs: []uint64{1}},
	}, plan.Steps, "no mode-only step, no modes")
	require.Equal(t, "v1\n", e.read("conf"))
	require.Equal(t, os.FileMode(0o600), e.perm("conf"), "keeps the mode it has")
	require.Equal(t, "gone\n", e.read("gone.txt"))
	require.Equal(t, os.FileMode(0o644), e.perm("gone.txt"))
	require.Equal(t, os.FileMode(0o755), e.perm("x.sh"), "a mode-only change is not undone")
	rec, err := facts.Decode[facts.WorkspaceRestored](lastFact(t, e.store, "old"))
	require.NoError(t, err)
	require.Equal(t, []facts.PathChange{
		{Path: "conf", Before: digest("v2\n"), After: digest("v1\n")},
		{Path: "gone.txt", After: digest("gone\n")},
	}, rec.Restored, "the record has no modes either")
}
