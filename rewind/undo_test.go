package rewind_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
)

// removeScript has a command remove d/f.txt, which an undo puts back.
const removeScript = `{"tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"rm d/f.txt\"}"}]}
{"text": "Done."}`

// newRemovedEnv runs a thread that removed d/f.txt ("mine").
func newRemovedEnv(t *testing.T) *harnesstest.Stock {
	t.Helper()
	e := harnesstest.NewStock(t, removeScript)
	require.NoError(t, os.Mkdir(filepath.Join(e.Root, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.Root, "d", "f.txt"), []byte("mine\n"), 0o644))
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	require.Equal(t, "(absent)", e.Read("d/f.txt"))
	return e
}

// An undo never writes through a parent directory that became a symbolic
// link: not outside the workspace, and not over another file inside it.
func TestUndoRefusesALinkedParent(t *testing.T) {
	t.Run("outside", func(t *testing.T) {
		e := newRemovedEnv(t)
		outside := t.TempDir()
		require.NoError(t, os.Remove(filepath.Join(e.Root, "d")))
		require.NoError(t, os.Symlink(outside, filepath.Join(e.Root, "d")))

		_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.ErrorIs(t, err, rewind.ErrUndoRefused)
		require.ErrorContains(t, err, "d/f.txt: its parent directory d is a symbolic link")
		_, err = os.Lstat(filepath.Join(outside, "f.txt"))
		require.ErrorIs(t, err, os.ErrNotExist, "nothing was written outside the workspace")
	})
	t.Run("inside", func(t *testing.T) {
		e := newRemovedEnv(t)
		require.NoError(t, os.Mkdir(filepath.Join(e.Root, "e"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.Root, "e", "f.txt"), []byte("someone else's\n"), 0o644))
		require.NoError(t, os.Remove(filepath.Join(e.Root, "d")))
		require.NoError(t, os.Symlink("e", filepath.Join(e.Root, "d")))

		head, err := e.Store.Head(ctx, "t")
		require.NoError(t, err)
		_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.ErrorIs(t, err, rewind.ErrUndoRefused)
		require.ErrorContains(t, err, "d/f.txt: its parent directory d is a symbolic link")
		require.Equal(t, "someone else's\n", e.Read("e/f.txt"))
		after, err := e.Store.Head(ctx, "t")
		require.NoError(t, err)
		require.Equal(t, head.Seq, after.Seq, "nothing was appended")
	})
	t.Run("plain", func(t *testing.T) {
		e := newRemovedEnv(t)
		_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "mine\n", e.Read("d/f.txt"))
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
func newModeEnv(t *testing.T, script string, perm os.FileMode) *harnesstest.Stock {
	t.Helper()
	e := harnesstest.NewStock(t, script)
	p := filepath.Join(e.Root, "run.sh")
	require.NoError(t, os.WriteFile(p, []byte("echo old\n"), perm))
	require.NoError(t, os.Chmod(p, perm)) // not less the umask
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	return e
}

func perm(e *harnesstest.Stock, rel string) os.FileMode {
	e.T.Helper()
	fi, err := os.Lstat(filepath.Join(e.Root, rel))
	require.NoError(e.T, err)
	return fi.Mode().Perm()
}

// observed is every path change the runtime observed in thread id's
// completed actions.
func observed(e *harnesstest.Stock, id string) []facts.PathChange {
	e.T.Helper()
	var out []facts.PathChange
	for f, err := range e.Store.Read(ctx, id, 1) {
		require.NoError(e.T, err)
		if f.Kind == facts.KindActionCompleted {
			p, err := facts.Decode[facts.ActionCompleted](f)
			require.NoError(e.T, err)
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
	require.Equal(t, os.FileMode(0o755), perm(e, "run.sh"))
	require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo old\n"), BeforeMode: 0o644, AfterMode: 0o755}},
		observed(e, "t"))
	require.Equal(t, "observed run.sh (mode 0644 → 0755)",
		present.DescribeObservation(facts.Observation{Available: true, Before: "a", After: "b", Changed: observed(e, "t")}))

	plan, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 0)
	require.NoError(t, err)
	require.Len(t, plan.Steps, 1)
	s := plan.Steps[0]
	require.Equal(t, rewind.UndoStep{Path: "run.sh", Left: digest("echo old\n"), Restore: digest("echo old\n"), LeftMode: 0o755, RestoreMode: 0o644, Seqs: s.Seqs}, s)
	require.Equal(t, os.FileMode(0o755), perm(e, "run.sh"), "a plan changes nothing")

	_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), perm(e, "run.sh"))
	require.Equal(t, "echo old\n", e.Read("run.sh"))
	last := harnesstest.LastFact(t, e.Store, "t")
	rec, err := facts.Decode[facts.WorkspaceRestored](last)
	require.NoError(t, err)
	require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo old\n"), BeforeMode: 0o755, AfterMode: 0o644}}, rec.Restored)
	require.Equal(t, "undo by ana restored run.sh (mode 0755 → 0644) to how it was at seq 0", present.Describe(last))
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "t"))

	plan, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
	require.NoError(t, err)
	require.Empty(t, plan.Steps, "undoing again finds nothing to do")
}

// A file an action rewrote, or replaced with a file of another mode, or
// removed, comes back with the content and the mode it had.
func TestUndoRestoresTheModeWithTheContent(t *testing.T) {
	t.Run("write_file over an executable", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o755)
		require.Equal(t, "echo new\n", e.Read("run.sh"))
		require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo new\n"), BeforeMode: 0o755, AfterMode: 0o755}},
			observed(e, "t"))

		_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "echo old\n", e.Read("run.sh"))
		require.Equal(t, os.FileMode(0o755), perm(e, "run.sh"))
	})
	t.Run("a command replaces an executable with a plain file", func(t *testing.T) {
		e := newModeEnv(t, commandScript("rm run.sh && echo echo new > run.sh && chmod 0640 run.sh"), 0o755)
		require.Equal(t, "echo new\n", e.Read("run.sh"))
		require.Equal(t, os.FileMode(0o640), perm(e, "run.sh"))
		require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo new\n"), BeforeMode: 0o755, AfterMode: 0o640}},
			observed(e, "t"))
		require.Contains(t, present.DescribeObservation(facts.Observation{Available: true, Before: "a", After: "b", Changed: observed(e, "t")}),
			"run.sh (modified, mode 0755 → 0640)")

		_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "echo old\n", e.Read("run.sh"))
		require.Equal(t, os.FileMode(0o755), perm(e, "run.sh"))
	})
	t.Run("a command removes an executable", func(t *testing.T) {
		e := newModeEnv(t, commandScript("rm run.sh"), 0o750)
		require.Equal(t, "(absent)", e.Read("run.sh"))

		_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "echo old\n", e.Read("run.sh"))
		require.Equal(t, os.FileMode(0o750), perm(e, "run.sh"), "recreated with its mode, not 0644")
	})
}

// An undo refuses, naming the path and changing nothing, when a file's
// owner-execute bit — the part of a mode the observer tracks — is no
// longer the one the thread left, or when only its content is back.
func TestUndoRefusesAModeChangedSince(t *testing.T) {
	refused := func(t *testing.T, e *harnesstest.Stock, left, now uint32, want string) {
		t.Helper()
		head, err := e.Store.Head(ctx, "t")
		require.NoError(t, err)
		_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.ErrorIs(t, err, rewind.ErrUndoRefused)
		var ue *rewind.UndoError
		require.ErrorAs(t, err, &ue)
		require.Len(t, ue.Conflicts, 1)
		require.Equal(t, "run.sh", ue.Conflicts[0].Path)
		require.Equal(t, left, ue.Conflicts[0].LeftMode)
		require.Equal(t, now, ue.Conflicts[0].NowMode)
		require.ErrorContains(t, err, want)
		after, err := e.Store.Head(ctx, "t")
		require.NoError(t, err)
		require.Equal(t, head.Seq, after.Seq, "nothing was appended")
	}
	t.Run("after a content change", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o755)
		require.NoError(t, os.Chmod(filepath.Join(e.Root, "run.sh"), 0o644))
		refused(t, e, 0o755, 0o644, "run.sh: its mode changed since the thread last touched it at seq")
		require.ErrorContains(t, func() error { _, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 0); return err }(),
			"(it left mode 0755, it has mode 0644 now)")
		require.Equal(t, "echo new\n", e.Read("run.sh"), "nothing was changed")
		require.Equal(t, os.FileMode(0o644), perm(e, "run.sh"))
	})
	t.Run("the content put back by hand, not the mode", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o755)
		p := filepath.Join(e.Root, "run.sh")
		require.NoError(t, os.WriteFile(p, []byte("echo old\n"), 0o644))
		require.NoError(t, os.Chmod(p, 0o644))
		refused(t, e, 0o755, 0o644, "run.sh: its content is back as it was at seq 0, but not its mode (it had mode 0755 then, it has mode 0644 now); set the mode by hand")
		require.Equal(t, os.FileMode(0o644), perm(e, "run.sh"))
	})
	t.Run("the mode put back by hand", func(t *testing.T) {
		e := newModeEnv(t, commandScript("chmod +x run.sh"), 0o644)
		require.NoError(t, os.Chmod(filepath.Join(e.Root, "run.sh"), 0o644))
		plan, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
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
		e := harnesstest.NewStock(t, commandsScript("echo secret > key.txt", "chmod 600 key.txt"))
		require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
		require.Equal(t, os.FileMode(0o600), perm(e, "key.txt"))
		plan, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.NoError(t, err)
		require.Len(t, plan.Steps, 1)
		require.Equal(t, "(absent)", e.Read("key.txt"))
	})
	t.Run("the content put back by hand with another umask", func(t *testing.T) {
		e := newModeEnv(t, writeRunScript, 0o644)
		p := filepath.Join(e.Root, "run.sh")
		require.NoError(t, os.WriteFile(p, []byte("echo old\n"), 0o664))
		require.NoError(t, os.Chmod(p, 0o664))
		plan, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 0)
		require.NoError(t, err)
		require.Empty(t, plan.Steps, "already as it was")
	})
	t.Run("group and other bits tightened since are kept", func(t *testing.T) {
		e := newModeEnv(t, commandScript("chmod +x run.sh"), 0o644)
		require.NoError(t, os.Chmod(filepath.Join(e.Root, "run.sh"), 0o700))
		plan, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 0)
		require.NoError(t, err)
		require.Len(t, plan.Steps, 1)
		require.Equal(t, uint32(0o600), plan.Steps[0].RestoreMode, "the plan says what will be set")
		_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), perm(e, "run.sh"))
		rec, err := facts.Decode[facts.WorkspaceRestored](harnesstest.LastFact(t, e.Store, "t"))
		require.NoError(t, err)
		require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo old\n"), BeforeMode: 0o755, AfterMode: 0o600}}, rec.Restored)
		plan, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
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
			e := harnesstest.NewStock(t, script)
			p := filepath.Join(e.Root, "conf")
			require.NoError(t, os.WriteFile(p, []byte("tgt"), 0o640))
			require.NoError(t, os.Chmod(p, 0o640))
			require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
			target, err := os.Readlink(p)
			require.NoError(t, err)
			require.Equal(t, "tgt", target)

			plan, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 0)
			require.NoError(t, err)
			require.Len(t, plan.Steps, 1)
			require.False(t, plan.Steps[0].ModeOnly())
			_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
			require.NoError(t, err)
			fi, err := os.Lstat(p)
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular())
			require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
			require.Equal(t, "tgt", e.Read("conf"))

			plan, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
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
	e := harnesstest.NewStock(t, removeScript)
	svc := e.RT.Services
	put := func(rel, content string, perm os.FileMode) {
		p := filepath.Join(e.Root, rel)
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
	// The old log: the message, the turn that called, the request, and its
	// completion (seq 4).
	var log []facts.Draft
	for _, r := range []struct {
		kind    facts.Kind
		cause   string
		payload any
	}{
		{facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "tidy up"}},
		{facts.KindModelTurn, "infer/turn/1", facts.ModelTurn{Turn: 1, ToolCalls: []facts.ToolCall{{ID: "c", Name: "run_command", Args: `{"command":"tidy"}`}}}},
		{facts.KindActionRequested, "tool/request/1-c", facts.ActionRequested{ActionID: "1-c", Capability: "execute", Adapter: "run_command", Payload: facts.RawJSON(`{"command":"tidy"}`)}},
		{facts.KindActionCompleted, "tool/execute/1-c", old},
	} {
		d, err := facts.NewDraft(r.kind, r.cause, r.payload)
		require.NoError(t, err)
		log = append(log, d)
	}
	_, err := e.Store.Append(ctx, "old", 0, log...)
	require.NoError(t, err)

	plan, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "old", 0, "ana")
	require.NoError(t, err)
	require.Equal(t, []rewind.UndoStep{
		{Path: "conf", Left: digest("v2\n"), Restore: digest("v1\n"), Seqs: []uint64{4}},
		{Path: "gone.txt", Restore: digest("gone\n"), Seqs: []uint64{4}},
	}, plan.Steps, "no mode-only step, no modes")
	require.Equal(t, "v1\n", e.Read("conf"))
	require.Equal(t, os.FileMode(0o600), perm(e, "conf"), "keeps the mode it has")
	require.Equal(t, "gone\n", e.Read("gone.txt"))
	require.Equal(t, os.FileMode(0o644), perm(e, "gone.txt"))
	require.Equal(t, os.FileMode(0o755), perm(e, "x.sh"), "a mode-only change is not undone")
	rec, err := facts.Decode[facts.WorkspaceRestored](harnesstest.LastFact(t, e.Store, "old"))
	require.NoError(t, err)
	require.Equal(t, []facts.PathChange{
		{Path: "conf", Before: digest("v2\n"), After: digest("v1\n")},
		{Path: "gone.txt", After: digest("gone\n")},
	}, rec.Restored, "the record has no modes either")
}

// Undo holds the thread's lease while it puts files back, as Resume does.
func TestUndoTakesTheLease(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	store := &harnesstest.Leased{PebbleStore: e.Store}
	rt, err := harness.NewRuntime(store, e.RT.Services, e.RT.Config)
	require.NoError(t, err)
	_, err = rewind.Undo(ctx, rt, e.Stock.Actor, "t", 0, "ana")
	require.NoError(t, err)
	require.True(t, store.Took(), "undo took the lease")
	require.Equal(t, "ttl_seconds = 60\n", e.Read("cache.toml"))
}
