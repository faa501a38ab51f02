package stock_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/sealnote"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// gitT runs git in dir for a test (the test's own git, not safegit).
func gitT(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// sealNotesWorld is a workspace that is a git repository with a commit, a
// thread run to its end in it, and a person's configuration directory.
func sealNotesWorld(t *testing.T) (*harnesstest.Stock, func(string) string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	gitT(t, e.Root, "", "init", "-q")
	gitT(t, e.Root, "", "commit", "-q", "--allow-empty", "-m", "one")
	e.RunApproved("t")
	cfg := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	return e, getenv, cfg
}

// With gitNote a seal is also a line of a git note on the workspace's
// HEAD; someone with the person's public key and not their witness log
// verifies the thread from the note alone; the same seal found in both is
// counted once.
func TestSealAsGitNote(t *testing.T) {
	e, getenv, _ := sealNotesWorld(t)
	p := e.Stock.Place
	entry, _, err := p.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", true)
	require.NoError(t, err)
	note := gitT(t, e.Root, "", "notes", "--ref=harness-seals", "show", "HEAD")
	var got seal.Entry
	require.NoError(t, json.Unmarshal([]byte(note), &got))
	require.Equal(t, entry.Sig, got.Sig)

	// The person: their witness log and the note hold the same seal.
	r, err := p.VerifySeals(ctx, getenv, e.Store, "t", stock.SealCheck{})
	require.NoError(t, err)
	require.Len(t, r.Seals, 1)
	require.Equal(t, seal.StatusHolds, r.Seals[0].Status)

	// Someone else, with the person's key only: the note's seal holds.
	other := t.TempDir()
	r, err = p.VerifySeals(ctx, func(string) string { return other }, e.Store, "t", stock.SealCheck{Keys: []seal.PublicKey{entry.Key}})
	require.NoError(t, err)
	require.True(t, r.Sealed())
	require.Contains(t, r.Seals[0].Witness, "git note refs/notes/harness-seals on ")

	// A second seal on the same commit is a second line of its note.
	ok, err := sealnote.Write(ctx, e.Root, seal.Entry{Thread: "t", Seq: 99})
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, strings.Split(gitT(t, e.Root, "", "notes", "--ref=harness-seals", "show", "HEAD"), "\n"), 2)
}

// A notes ref planted as a symbolic ref to a branch is refused: the
// branch does not move, the seal is in the witness log still, and the
// error says it was not noted.
func TestSealNoteRefusesASymbolicRef(t *testing.T) {
	e, getenv, _ := sealNotesWorld(t)
	branch := gitT(t, e.Root, "", "symbolic-ref", "HEAD")
	before := gitT(t, e.Root, "", "rev-parse", "HEAD")
	gitT(t, e.Root, "", "symbolic-ref", sealnote.Ref, branch)
	entry, _, err := e.Stock.Place.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", true)
	require.ErrorIs(t, err, seal.ErrNotAnchored)
	require.ErrorIs(t, err, sealnote.ErrUnusable)
	require.NotNil(t, entry.Sig, "sealed in the witness log")
	require.Equal(t, before, gitT(t, e.Root, "", "rev-parse", "HEAD"), "the branch did not move")

	// A dangling symbolic ref too.
	gitT(t, e.Root, "", "symbolic-ref", sealnote.Ref, "refs/heads/nowhere")
	_, err = sealnote.Write(ctx, e.Root, entry)
	require.ErrorIs(t, err, sealnote.ErrUnusable)
	_, err = sealnote.Read(ctx, e.Root)
	require.ErrorIs(t, err, sealnote.ErrUnusable)
}

// plantNotes makes sealnote.Ref a commit of notes, each note's content
// given by the object it annotates (40 hex digits), as a repository's
// writer could.
func plantNotes(t *testing.T, dir string, notes map[string]string) {
	t.Helper()
	var tree strings.Builder
	blobs := map[string]string{}
	for on, content := range notes {
		b, ok := blobs[content]
		if !ok {
			b = gitT(t, dir, content, "hash-object", "-w", "--stdin")
			blobs[content] = b
		}
		fmt.Fprintf(&tree, "100644 blob %s\t%s\n", b, on)
	}
	tr := gitT(t, dir, tree.String(), "mktree")
	c := gitT(t, dir, "", "commit-tree", tr, "-m", "planted")
	gitT(t, dir, "", "update-ref", sealnote.Ref, c)
}

// A planted note whose seal names the person's key but was signed by
// another fails verification, naming the note; one signed by another key
// is reported and proves nothing.
func TestSealNoteForgedIsRefused(t *testing.T) {
	e, getenv, _ := sealNotesWorld(t)
	p := e.Stock.Place
	entry, _, err := p.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", false)
	require.NoError(t, err)
	head := gitT(t, e.Root, "", "rev-parse", "HEAD")
	mallory, _, err := seal.OpenKey(filepath.Join(t.TempDir(), "k", seal.KeyFile))
	require.NoError(t, err)

	// Signed by mallory, as mallory: another key, not checked.
	theirs := entry
	theirs.Seq, theirs.Key = 1, mallory.Public()
	theirs.Sig = mallory.Sign(theirs.Message())
	line, _ := json.Marshal(theirs)
	plantNotes(t, e.Root, map[string]string{head: string(line) + "\n"})
	other := t.TempDir()
	r, err := p.VerifySeals(ctx, func(string) string { return other }, e.Store, "t", stock.SealCheck{Keys: []seal.PublicKey{entry.Key}})
	require.ErrorIs(t, err, seal.ErrNoSealByKey, "the note proves nothing for the person's key")
	require.Len(t, r.Seals, 1)
	require.Equal(t, seal.StatusUnknownKey, r.Seals[0].Status)

	// The person's key named, mallory's signature: refused, named.
	forged := entry
	forged.Seq = 1
	forged.Sig = mallory.Sign(forged.Message())
	line, _ = json.Marshal(forged)
	plantNotes(t, e.Root, map[string]string{head: string(line) + "\n"})
	_, err = p.VerifySeals(ctx, func(string) string { return other }, e.Store, "t", stock.SealCheck{Keys: []seal.PublicKey{entry.Key}})
	var be *seal.BrokenError
	require.True(t, errors.As(err, &be), "%v", err)
	require.Equal(t, "git note "+sealnote.Ref+" on "+head, be.Witness)
	require.Equal(t, 1, be.Line)

	// A note that is not a seal: refused, named.
	plantNotes(t, e.Root, map[string]string{head: "\x1b[2Jhello\n"})
	_, err = p.VerifySeals(ctx, getenv, e.Store, "t", stock.SealCheck{})
	require.ErrorIs(t, err, sealnote.ErrUnusable)
	require.ErrorContains(t, err, "on "+head+" line 1")
}

// A huge notes ref is read within bounds: past sealnote.MaxNotes notes, and a
// note over sealnote.MaxNoteBytes, are not read and are counted.
func TestSealNotesReadWithinBounds(t *testing.T) {
	e, getenv, _ := sealNotesWorld(t)
	entry, _, err := e.Stock.Place.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", false)
	require.NoError(t, err)
	line, _ := json.Marshal(entry)
	notes := map[string]string{}
	for i := range sealnote.MaxNotes + 10 {
		notes[fmt.Sprintf("%040x", i+1)] = string(line) + "\n"
	}
	notes[strings.Repeat("f", 40)] = strings.Repeat("x", sealnote.MaxNoteBytes+1)
	plantNotes(t, e.Root, notes)
	sn, err := sealnote.Read(ctx, e.Root)
	require.NoError(t, err)
	require.Len(t, sn.Found, sealnote.MaxNotes)
	require.Equal(t, 11, sn.Skipped)

	r, err := e.Stock.Place.VerifySeals(ctx, getenv, e.Store, "t", stock.SealCheck{})
	require.NoError(t, err)
	require.Len(t, r.Seals, 1, "the notes' copies of the witness log's seal count once")
	require.Len(t, r.Unread, 1)
	require.Contains(t, r.Unread[0], "11 notes")
}

// BenchmarkSealGitNote times a seal written as a git note too (the
// opt-in: a few git commands through safegit) against the seal alone
// (the witness log's signed, synced append), op by op in the same run.
// ms/noted is a seal with its note; ratio is that over ms/seal.
func BenchmarkSealGitNote(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	root := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
	store, err := thread.OpenPebble(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { store.Close() })
	d, err := facts.NewDraft(facts.KindUserMessage, "bench/start", facts.UserMessage{Text: "hi"})
	require.NoError(b, err)
	head, err := store.Append(ctx, "t", 0, d)
	require.NoError(b, err)
	dir := b.TempDir()
	k, _, err := seal.OpenKey(filepath.Join(dir, seal.KeyFile))
	require.NoError(b, err)
	plain := &seal.Sealer{Key: k, Witness: &seal.Witness{Path: filepath.Join(dir, "plain.jsonl")}, Store: "s"}
	noted := &seal.Sealer{Key: k, Witness: &seal.Witness{Path: filepath.Join(dir, seal.WitnessFile)}, Store: "s",
		Anchor: stock.Place{Root: root}.NoteAnchor()}
	var plainT, notedT time.Duration
	seq := 0
	for b.Loop() {
		seq++
		h := head
		h.Hash[0], h.Hash[1] = byte(seq), byte(seq>>8) // another head each time: nothing is deduplicated
		start := time.Now()
		_, err := plain.Seal(ctx, store, h)
		require.NoError(b, err)
		plainT += time.Since(start)
		start = time.Now()
		_, err = noted.Seal(ctx, store, h)
		require.NoError(b, err)
		notedT += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(notedT)/n/1e6, "ms/noted")
	b.ReportMetric(float64(plainT)/n/1e6, "ms/seal")
	b.ReportMetric(float64(notedT)/float64(plainT), "ratio")
}

// Only the notes ref itself is read, and only notes named by an object:
// a ref below its name, or an entry named with escape codes, is not a
// note of seals.
func TestSealNotesPlantedNames(t *testing.T) {
	e, getenv, _ := sealNotesWorld(t)
	entry, _, err := e.Stock.Place.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", false)
	require.NoError(t, err)
	line, _ := json.Marshal(entry)
	plantNotes(t, e.Root, map[string]string{"\x1b[2Jevil": "garbage\n", strings.Repeat("a", 40): string(line) + "\n"})
	sn, err := sealnote.Read(ctx, e.Root)
	require.NoError(t, err)
	require.Len(t, sn.Found, 1)
	require.Equal(t, "git note "+sealnote.Ref+" on "+strings.Repeat("a", 40), sn.Found[0].Witness)

	c := gitT(t, e.Root, "", "rev-parse", sealnote.Ref)
	gitT(t, e.Root, "", "update-ref", "-d", sealnote.Ref)
	gitT(t, e.Root, "", "update-ref", sealnote.Ref+"/x", c)
	sn, err = sealnote.Read(ctx, e.Root)
	require.NoError(t, err)
	require.Empty(t, sn.Found, "a ref below the name is not the notes ref")
}

// The note is written with git as harness runs it in an untrusted
// repository: a hook the repository planted (reference-transaction runs
// on every ref update, in .git/hooks and in a core.hooksPath it names)
// does not run, nor does an fsmonitor, and the repository's identity is
// not the note's.
func TestSealNoteRunsNothingOfTheRepository(t *testing.T) {
	e, getenv, _ := sealNotesWorld(t)
	marker := filepath.Join(t.TempDir(), "ran")
	hook := "#!/bin/sh\necho ran >> " + marker + "\n"
	for _, dir := range []string{filepath.Join(e.Root, ".git", "hooks"), filepath.Join(e.Root, "myhooks")} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, name := range []string{"reference-transaction", "post-commit", "pre-commit"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(hook), 0o755))
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.Root, "fsmon"), []byte(hook), 0o755))
	gitT(t, e.Root, "", "config", "core.hooksPath", filepath.Join(e.Root, "myhooks"))
	gitT(t, e.Root, "", "config", "core.fsmonitor", filepath.Join(e.Root, "fsmon"))
	gitT(t, e.Root, "", "config", "user.name", "mallory")
	// The test's own git runs the hooks: check that they would run.
	gitT(t, e.Root, "", "update-ref", "refs/heads/probe", "HEAD")
	require.FileExists(t, marker)
	require.NoError(t, os.Remove(marker))

	_, _, err := e.Stock.Place.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", true)
	require.NoError(t, err)
	require.NoFileExists(t, marker)
	require.Equal(t, "harness", gitT(t, e.Root, "", "log", "-1", "--format=%an", sealnote.Ref))
}

// Where there is no git, or a repository harness will not run git in (a
// planted commondir), the notes are not read and the witness log's seals
// still verify: only a notes ref that says something false fails.
func TestSealNotesUnreadableDoNotFail(t *testing.T) {
	e, getenv, _ := sealNotesWorld(t)
	_, _, err := e.Stock.Place.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", true)
	require.NoError(t, err)

	gitDir := filepath.Join(e.Root, ".git")
	require.NoError(t, os.WriteFile(filepath.Join(gitDir, "commondir"), []byte(t.TempDir()), 0o644))
	r, err := e.Stock.Place.VerifySeals(ctx, getenv, e.Store, "t", stock.SealCheck{})
	require.NoError(t, err)
	require.True(t, r.Sealed())
	require.Len(t, r.Unread, 1)
	require.Contains(t, r.Unread[0], "were not read")
	require.NoError(t, os.Remove(filepath.Join(gitDir, "commondir")))

	t.Setenv("PATH", t.TempDir())
	r, err = e.Stock.Place.VerifySeals(ctx, getenv, e.Store, "t", stock.SealCheck{})
	require.NoError(t, err)
	require.True(t, r.Sealed())
	require.Empty(t, r.Unread)
}
