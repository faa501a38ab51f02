package rewind

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// UndoError names the paths an undo refused to touch, and why.
type UndoError struct {
	Thread    string
	Conflicts []UndoConflict
}

// UndoConflict is one path an undo refused.
type UndoConflict struct {
	Path string
	// Left is the digest the thread's last change left at the path ("" for
	// absent); Now is the digest there now.
	Left, Now string
	// LeftMode is the permission bits the thread's last change left (0
	// where the log did not record them); NowMode is the path's now (0
	// where it is absent or not a regular file).
	LeftMode, NowMode uint32
	// Reason says what is wrong, for a person.
	Reason string
}

// Error names every refused path, one a line (see Lines).
func (e *UndoError) Error() string { return strings.Join(e.Lines(), "\n") }

// Lines is the error as a person reads it: what was refused, then each
// refused path and why, indented, one a line. A path is the workspace's,
// and may hold any character: escape each line before it reaches a
// terminal.
func (e *UndoError) Lines() []string {
	lines := []string{fmt.Sprintf("undo %s refused; nothing was changed:", e.Thread)}
	for _, c := range e.Conflicts {
		lines = append(lines, fmt.Sprintf("  %s: %s", c.Path, c.Reason))
	}
	return lines
}

// Is reports whether target is ErrUndoRefused.
func (e *UndoError) Is(target error) bool { return target == ErrUndoRefused }

// UndoStep is one path an undo restores. A step that restores a mode only
// (ModeOnly) leaves the file's content as it is.
type UndoStep struct {
	Path string
	// Left is the digest the thread's last change left ("" for absent);
	// Restore is the digest to put back ("" to remove the path).
	Left, Restore string
	// LeftMode is the permission bits the thread's last change left;
	// RestoreMode is the permission bits to put back. Either is 0 where
	// the log did not record it (facts written before modes were
	// recorded, a path that was absent or not a regular file).
	//
	// Like the workspace observer (and git), an undo tracks only the
	// owner-execute bit of a mode: the file must still have LeftMode's
	// (unless the step removes it), and a file whose content and
	// owner-execute bit are as they were is not restored. A restored file
	// gets RestoreMode, but keeps those of its other permission bits that
	// are no longer the ones LeftMode says the thread left — someone
	// changed them since, most likely to tighten them (chmod 600) — and
	// its setuid, setgid and sticky bits: the plan's RestoreMode already
	// says so, and Undo's returned plan has the bits it set. Where
	// RestoreMode is 0 a restored file keeps the permission bits it has,
	// or gets 0644 if it is created.
	LeftMode, RestoreMode uint32
	// Seqs are the facts whose observed changes touched the path.
	Seqs []uint64
}

// ModeOnly reports whether s restores a mode alone: the content to put
// back is the file's now (Left equals Restore), and both modes are
// recorded. A step whose Left equals its Restore but whose LeftMode is
// not recorded — a symlink the thread put where a regular file with the
// same digest was — writes the file again, as any other restore.
func (s UndoStep) ModeOnly() bool {
	return s.Restore != "" && s.Restore == s.Left && s.LeftMode != 0 && s.RestoreMode != 0
}

// UndoPlan is what an undo of a thread after seq To would do.
type UndoPlan struct {
	Thread string
	To     uint64
	// Head is the thread's head the plan was made at.
	Head uint64
	// Steps are the paths to restore, by path; a path already as it was at
	// To is not among them.
	Steps []UndoStep
}

// PlanUndo works out, from the thread's log and the workspace as it is
// now, how to restore the files the thread's actions changed after seq to.
// The changes are those the runtime observed — action.completed's changed
// paths, action.interrupted's, and earlier undos' — so a file a shell
// command changed is restored like one a write tool changed. Where the log
// recorded permission bits (facts.PathChange's modes), a file is restored
// with its earlier mode too, and a change of mode alone (chmod +x) is
// undone. Of a mode, only what the observer tracks counts — whether the
// path is a regular file or a symlink, and a file's owner-execute bit (see
// UndoStep). It refuses with an *UndoError (ErrUndoRefused) naming every
// path that no longer holds what the thread left there — its content, and
// that part of its mode where the log recorded it — or whose earlier
// bytes were not kept by blobs, or that was a symlink before. It changes
// nothing.
//
// In a tree of threads (see harness.Delegate) the changes of the children
// the thread spawned count as the thread's: each child's, its own
// children's included, where its report is in the thread's log (an
// unreported child's after the thread's last fact), so an undo of a parent
// puts back what its children did too, in the order it was done. actor is
// the tree root's.
func PlanUndo(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, to uint64) (UndoPlan, error) {
	plan, _, err := planUndo(ctx, rt, actor, id, to)
	return plan, err
}

// Undo restores the files PlanUndo plans to restore, then appends a
// workspace.restored fact recording what it restored, by whom, as an
// ingress fact at the head the plan was made at. Every kept content is
// fetched before any file is touched; each file is replaced whole (written
// beside it, then renamed), and a file whose mode alone is restored is
// changed in place. A plan with no steps changes nothing and appends
// nothing.
//
// Undo holds the thread as Resume does — this process's lock, and the
// thread's lease on a store processes share (thread.Leaser) — so that no
// runtime acts on the thread while its files are put back.
func Undo(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, to uint64, by string) (UndoPlan, error) {
	return undo(ctx, rt, actor, id, to, by, 0)
}

// undo is Undo; with seen not 0, refused (ErrMoved) unless the thread's
// head, once held, is seq seen.
func undo(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, to uint64, by string, seen uint64) (UndoPlan, error) {
	ctx, release, err := harness.Hold(ctx, rt.Store, id)
	if err != nil {
		return UndoPlan{}, fmt.Errorf("undo %s: %w", id, err)
	}
	defer release()
	plan, contents, err := planUndo(ctx, rt, actor, id, to)
	if err == nil && seen != 0 && plan.Head != seen {
		return plan, fmt.Errorf("undo %s: %w (seq %d when previewed, %d now): look at the preview again", id, ErrMoved, seen, plan.Head)
	}
	if err != nil || len(plan.Steps) == 0 {
		return plan, err
	}
	for i, s := range plan.Steps {
		mode, err := restoreFile(rt.Services.Workspace, s, contents[s.Restore])
		if err != nil {
			return plan, fmt.Errorf("undo %s: %w (files before %s in the list are restored; the log records nothing)", id, err, s.Path)
		}
		if s.RestoreMode != 0 && mode != 0 {
			plan.Steps[i].RestoreMode = mode // what was set, bits kept included
		}
	}
	rec := facts.WorkspaceRestored{To: to, By: by}
	for _, s := range plan.Steps {
		rec.Restored = append(rec.Restored, facts.PathChange{Path: s.Path, Before: s.Left, After: s.Restore, BeforeMode: s.LeftMode, AfterMode: s.RestoreMode})
	}
	d, err := facts.NewDraft(facts.KindWorkspaceRestored, facts.IngressCause("undo-"+strconv.FormatUint(plan.Head, 10)), rec)
	if err != nil {
		return plan, fmt.Errorf("undo %s: %w", id, err)
	}
	// The files are back: record it even if the lease was lost meanwhile
	// (the expected head still decides whether the record fits).
	if _, err := rt.Store.Append(context.WithoutCancel(ctx), id, plan.Head, d); err != nil {
		return plan, fmt.Errorf("undo %s: the files are restored, but the record could not be appended: %w", id, err)
	}
	return plan, nil
}

// pathState is what a path held, as a fact recorded it or as the observer
// sees it now: its digest ("" for absent) and action.PathMode of its mode
// (0 for a symlink, or a file with no permission bits at all; also 0 where
// the fact did not record modes), and, where mode is 0, whether that is
// known to mean a symlink (link) rather than a mode not recorded.
type pathState struct {
	digest string
	mode   uint32
	link   bool
}

// recorded are the states on either side of c. A change that records a
// mode on either side (every change since modes were recorded that has a
// regular file with permission bits on a side) says by a mode of 0 next to a digest that the
// path was not a regular file with permission bits: a symlink.
func recorded(c facts.PathChange) (before, after pathState) {
	typed := c.BeforeMode != 0 || c.AfterMode != 0
	return pathState{c.Before, c.BeforeMode, typed && c.Before != "" && c.BeforeMode == 0},
		pathState{c.After, c.AfterMode, typed && c.After != "" && c.AfterMode == 0}
}

// observedState is the state of a path the observer reports with mode m now.
func observedState(digest string, m fs.FileMode) pathState {
	mode := action.PathMode(m)
	return pathState{digest, mode, digest != "" && mode == 0}
}

// kind is what the workspace observer tracks of s besides its digest —
// like git, only the owner-execute bit of a mode: 'a' absent, 'l' a
// symlink (or a file without permission bits), 'x' a regular file whose
// owner may execute it, 'f' another regular file, '?' not recorded.
// With typeOnly, 'x' is 'f': only the type counts.
func (s pathState) kind(typeOnly bool) byte {
	switch {
	case s.digest == "":
		return 'a'
	case s.link:
		return 'l'
	case s.mode == 0:
		return '?'
	case s.mode&0o100 != 0 && !typeOnly:
		return 'x'
	}
	return 'f'
}

// matches reports whether now (an observed state) holds what s recorded,
// as far as the observer can tell: the same digest, and the same kind
// where s recorded one (only the same type, with typeOnly). Permission
// bits other than the owner-execute bit are not compared: the observer
// never sees them change, so a change of them alone is in no log.
func (s pathState) matches(now pathState, typeOnly bool) bool {
	k := s.kind(typeOnly)
	return s.digest == now.digest && (k == '?' || k == now.kind(typeOnly))
}

// word says what s is besides its content, for a person.
func (s pathState) word() string {
	switch s.kind(false) {
	case 'a':
		return "nothing (absent)"
	case 'l':
		return "a symbolic link (or a file without permission bits)"
	case '?':
		return "a mode not recorded"
	}
	return modeWord(s.mode)
}

func planUndo(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, to uint64) (UndoPlan, map[string][]byte, error) {
	plan := UndoPlan{Thread: id, To: to}
	svc := rt.Services
	if svc.Observer == nil || svc.Workspace == "" {
		return plan, nil, fmt.Errorf("undo %s: no workspace observer: nothing can say what the files hold now", id)
	}
	// What the files are put back to comes from the log: a log whose
	// links say a fact was changed is not acted on (the thread opens from
	// its snapshot, which does not read what lies before it).
	if err := rt.Store.Verify(ctx, id); err != nil {
		return plan, nil, fmt.Errorf("undo %s: the log does not verify: %w", id, err)
	}
	th, err := rt.Open(ctx, actor, id)
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: %w", id, err)
	}
	v, err := th.View(ctx)
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: %w", id, err)
	}
	whole, err := th.Reading(ctx)
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: %w", id, err)
	}
	plan.Head = v.Head.Seq
	if to > v.Head.Seq {
		return plan, nil, fmt.Errorf("undo %s: to %d is past the thread's last fact (seq %d)", id, to, v.Head.Seq)
	}
	// A path's chain runs from what it held before the first change after
	// to (first) to what the last change left (last).
	type chain struct {
		first, last pathState
		seqs        []uint64
	}
	chains := map[string]*chain{}
	var order []string
	note := func(seq uint64, cs []facts.PathChange) {
		for _, c := range cs {
			before, after := recorded(c)
			if before.matches(after, false) && after.matches(before, false) {
				// Nothing the observer tracks changed, or the log does
				// not say what did (a mode change written before modes
				// were recorded).
				continue
			}
			ch := chains[c.Path]
			if ch == nil {
				ch = &chain{first: before}
				chains[c.Path] = ch
				order = append(order, c.Path)
			}
			ch.last = after
			ch.seqs = append(ch.seqs, seq)
		}
	}
	changes := changesAfter(whole, to)
	kids, err := treeChanges(ctx, rt, actor, th, to, v.Head.Seq)
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: %w", id, err)
	}
	changes = append(changes, kids...)
	sortChanges(changes)
	for _, c := range changes {
		note(c.seq, c.paths)
	}
	snap, err := svc.Observer.Observe(ctx)
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: observe the workspace: %w", id, err)
	}
	now := make(map[string]pathState, len(snap.Files))
	modes := make(map[string]fs.FileMode, len(snap.Files))
	for _, f := range snap.Files {
		now[f.Path] = observedState(f.Digest, f.Mode)
		modes[f.Path] = f.Mode
	}
	slices.Sort(order)
	r, err := os.OpenRoot(svc.Workspace)
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: %w", id, err)
	}
	defer r.Close()
	var conflicts []UndoConflict
	contents := map[string][]byte{}
	for _, p := range order {
		ch := chains[p]
		first, last, cur := ch.first, ch.last, now[p]
		if first.matches(cur, false) {
			continue // already as it was, as far as the observer can tell
		}
		lastSeq := ch.seqs[len(ch.seqs)-1]
		refuse := func(reason string) {
			conflicts = append(conflicts, UndoConflict{Path: p, Left: last.digest, Now: cur.digest, LeftMode: last.mode, NowMode: cur.mode, Reason: reason})
		}
		// The observer does not follow links: behind a parent that is a
		// link now, the path is not the file the thread changed, and a
		// restore would write wherever the link leads.
		if link, err := linkedParent(r, p); err != nil || link != "" {
			reason := fmt.Sprintf("its parent directory %s is a symbolic link now; undo does not write through links: restore it by hand", link)
			if err != nil {
				reason = fmt.Sprintf("its parent directories cannot be checked: %v", err)
			}
			refuse(reason)
			continue
		}
		// A file to remove loses no content to a mode changed since: only
		// its type must still be the one the thread left.
		remove := first.digest == ""
		if !last.matches(cur, remove) {
			switch {
			case cur.digest == last.digest:
				refuse(fmt.Sprintf("its mode changed since the thread last touched it at seq %d (it left %s, it has %s now); restore it by hand, or undo to a later seq",
					lastSeq, last.word(), cur.word()))
			case cur.digest == first.digest:
				refuse(fmt.Sprintf("its content is back as it was at seq %d, but not its mode (it had %s then, it has %s now); set the mode by hand",
					to, first.word(), cur.word()))
			default:
				refuse(fmt.Sprintf("changed since the thread last touched it at seq %d (it left %s, it holds %s now); restore it by hand, or undo to a later seq",
					lastSeq, digestWord(last.digest), digestWord(cur.digest)))
			}
			continue
		}
		if first.link {
			refuse(fmt.Sprintf("it was a symbolic link (or a file without permission bits) at seq %d; undo does not recreate those: restore it by hand", to))
			continue
		}
		s := UndoStep{Path: p, Left: last.digest, Restore: first.digest, LeftMode: last.mode, RestoreMode: first.mode, Seqs: ch.seqs}
		if s.Restore != "" && s.RestoreMode != 0 {
			// The bits restoreFile will set, as the file is now.
			have := modes[p]
			if m := uint32(restoredMode(s, have, cur.digest != "" && have.IsRegular()).Perm()); m != 0 {
				s.RestoreMode = m
			}
		}
		if s.Restore != "" && !s.ModeOnly() {
			if _, ok := contents[s.Restore]; !ok {
				b, err := fetch(ctx, svc.Blobs, s.Restore)
				if err != nil {
					refuse(err.Error())
					continue
				}
				contents[s.Restore] = b
			}
		}
		plan.Steps = append(plan.Steps, s)
	}
	if len(conflicts) > 0 {
		return plan, nil, &UndoError{Thread: id, Conflicts: conflicts}
	}
	return plan, contents, nil
}

// change is one record of paths changed, at its seq.
type change struct {
	seq   uint64
	paths []facts.PathChange
}

// changesAfter are the changes the view records after seq to, in log
// order: what the runtime observed each action change (a completion's, or
// what an interruption found), and what earlier undos put back.
func changesAfter(r scheduler.Reading, to uint64) []change {
	var out []change
	for _, a := range r.Actions() {
		if a.Completed != nil && a.CompletedSeq > to {
			out = append(out, change{a.CompletedSeq, a.Completed.Observation.Changed})
		}
		if a.Interrupted != nil && a.InterruptedSeq > to {
			out = append(out, change{a.InterruptedSeq, a.Interrupted.Changed})
		}
	}
	for _, u := range r.Restored {
		if u.Seq > to {
			out = append(out, change{u.Seq, u.Restored})
		}
	}
	sortChanges(out)
	return out
}

// sortChanges orders changes by seq, keeping the order of those at one
// seq (a child's, which land at its report).
func sortChanges(cs []change) {
	slices.SortStableFunc(cs, func(a, b change) int { return cmp.Compare(a.seq, b.seq) })
}

// short is a digest shortened for a person.
func short(digest string) string {
	if digest == "" {
		return "(none)"
	}
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

func digestWord(d string) string {
	if d == "" {
		return "nothing (absent)"
	}
	return short(d)
}

// modeWord says what permission bits a path has, for a person.
func modeWord(m uint32) string {
	if m == 0 {
		return "no mode (absent, or not a regular file)"
	}
	return fmt.Sprintf("mode %04o", m)
}

// fetch returns the kept bytes of digest.
func fetch(ctx context.Context, blobs action.Blobs, digest string) ([]byte, error) {
	if k := facts.SpecialKind(digest); k != "" {
		return nil, fmt.Errorf("it was a %s, which undo does not make: make it by hand", k)
	}
	if facts.IsStatDigest(digest) {
		return nil, fmt.Errorf("its earlier content was never read (larger than %d bytes, the observer's hash limit: known by its size and times alone), so it was not kept: undo cannot restore it; restore it by hand", action.DefaultHashLimit)
	}
	if blobs == nil {
		return nil, fmt.Errorf("its earlier content %s was not kept: this store keeps no file contents", short(digest))
	}
	b, err := blobs.GetBlob(ctx, digest)
	if errors.Is(err, fs.ErrNotExist) { // the Blobs contract; action.ErrNoBlob is one such error
		return nil, fmt.Errorf("its earlier content %s was not kept (larger than %d bytes, or never read)", short(digest), action.DefaultBlobCap)
	}
	if err != nil {
		return nil, fmt.Errorf("read kept content %s: %w", short(digest), err)
	}
	return b, nil
}

// linkedParent returns the first parent directory of rel (slash
// separated, inside r) that is a symbolic link, or "". A missing parent
// ends the search: there is nothing further to follow.
func linkedParent(r *os.Root, rel string) (string, error) {
	dir := path.Dir(rel)
	if dir == "." {
		return "", nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := r.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", nil
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink != 0:
			return p, nil
		case !fi.IsDir():
			return "", fmt.Errorf("%s is not a directory", p)
		}
	}
	return "", nil
}

// openFlags opens a file to read it, as the workspace observer does:
// O_NONBLOCK where there are named pipes, so that a pipe put in place of
// the file since it was looked at does not make the open wait for a
// writer while Undo holds the thread (the identity check then refuses
// it); it changes nothing for a regular file.
var openFlags = func() int {
	if runtime.GOOS == "windows" {
		return os.O_RDONLY
	}
	return os.O_RDONLY | syscall.O_NONBLOCK
}()

// lookHook, in tests, runs in look before a regular file is opened
// (stage "open") and after its bytes were read (stage "read").
var lookHook func(stage, rel string)

// errReplaced: the path changed from one thing to another while it was
// looked at.
var errReplaced = errors.New("it was replaced while it was read")

// look is what the workspace observer would give rel inside r now: the
// SHA-256 of a regular file's bytes or of a symlink's target ("" for a
// path that does not exist), and the path's info — a symlink's from
// Lstat, a regular file's taken from the open file after its bytes were
// read, so that its mode is not older than its digest. With keep, a
// regular file is returned open too, for the caller to close.
//
// A regular file that was known by its stat record alone (stat: the
// digest planned is a stat digest), or that is larger than the
// observer's hash limit, is not read: its digest is its stat digest
// (action.StatDigest), which a content digest never equals.
func look(r *os.Root, rel string, keep, stat bool) (digest string, fi fs.FileInfo, f *os.File, err error) {
	lfi, err := r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, nil, nil
	case err != nil:
		return "", nil, nil, err
	case lfi.Mode()&fs.ModeSymlink != 0:
		target, err := r.Readlink(rel)
		if err != nil {
			return "", nil, nil, err
		}
		sum := sha256.Sum256([]byte(target))
		return hex.EncodeToString(sum[:]), lfi, nil, nil
	case lfi.IsDir():
		return "", nil, nil, fmt.Errorf("it is not a regular file (%v)", lfi.Mode().Type())
	case !lfi.Mode().IsRegular():
		// A FIFO, socket or device: known by its kind, never opened.
		return action.SpecialDigest(lfi.Mode()), lfi, nil, nil
	}
	if lookHook != nil {
		lookHook("open", rel)
	}
	f, err = r.OpenFile(rel, openFlags, 0)
	if err != nil {
		return "", nil, nil, err
	}
	opened, err := f.Stat()
	if err == nil && (!opened.Mode().IsRegular() || !os.SameFile(lfi, opened)) {
		err = errReplaced
	}
	switch {
	case err != nil:
	case stat || opened.Size() > action.DefaultHashLimit:
		digest = action.StatDigest(opened)
	default:
		digest, err = digestOf(f)
	}
	if err == nil && lookHook != nil {
		lookHook("read", rel)
	}
	if err == nil {
		fi, err = f.Stat()
	}
	if err != nil || !keep {
		f.Close()
		f = nil
	}
	if err != nil {
		return "", nil, nil, err
	}
	return digest, fi, f, nil
}

// modeOf is action.PathMode of fi's mode, 0 for nil (absent).
func modeOf(fi fs.FileInfo) uint32 {
	if fi == nil {
		return 0
	}
	return action.PathMode(fi.Mode())
}

// digestOf is the SHA-256 of what is left to read of f.
func digestOf(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// holds says why a path planned to hold s.Left does not now (digest and
// mode are what it holds now, as look gives them), or "" if it does: its
// digest, and the owner-execute bit of s.LeftMode where recorded — the
// part of a mode the observer tracks; only whether it is a regular file,
// for a step that removes it.
func holds(s UndoStep, digest string, mode uint32) string {
	left := pathState{digest: s.Left, mode: s.LeftMode}
	now := pathState{digest, mode, digest != "" && mode == 0}
	switch {
	case digest != s.Left:
		return fmt.Sprintf("changed while the undo ran (it held %s when planned, %s now)", digestWord(s.Left), digestWord(digest))
	case !left.matches(now, s.Restore == ""):
		return fmt.Sprintf("its mode changed while the undo ran (%s when planned, %s now)", left.word(), now.word())
	}
	return ""
}

// untracked are the permission bits the workspace observer does not
// track: all but the owner-execute bit.
const untracked fs.FileMode = fs.ModePerm &^ 0o100

// special are the mode bits a restore keeps from the file it restores.
const special = fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// restoredMode is the mode a restore gives the file s.Path, where have is
// the mode of the regular file there now (exists), if any:
//
//   - s.RestoreMode, where it is recorded — but for the bits the observer
//     does not track (owner read and write, group, other), where the
//     file's are not those the thread left (s.LeftMode): nothing in the
//     log saw them change, so they were changed since by someone (maybe
//     by the thread, in an action whose observed change was none), most
//     likely to tighten them, and the file keeps its own rather than have
//     them loosened;
//   - where s.RestoreMode is not recorded, the file's own permission bits,
//     or 0644 for a file created;
//   - and, either way, the setuid, setgid and sticky bits the file has.
func restoredMode(s UndoStep, have fs.FileMode, exists bool) fs.FileMode {
	if !exists {
		have = 0
	}
	var m fs.FileMode
	switch {
	case s.RestoreMode == 0 && exists:
		m = have.Perm()
	case s.RestoreMode == 0:
		m = 0o644
	default:
		m = fs.FileMode(s.RestoreMode).Perm()
		if exists && s.LeftMode != 0 && have&untracked != fs.FileMode(s.LeftMode)&untracked {
			m = m&^untracked | have&untracked
		}
	}
	return m | have&special
}

// restoreMode sets the mode of the regular file s.Path inside r to
// restoredMode's, leaving its content, once it has checked, on the file
// it changes, that the file still holds s.Left with s.LeftMode's
// owner-execute bit, and, with checkParents, that no parent directory is
// a link. It returns the permission bits set.
func restoreMode(r *os.Root, s UndoStep, checkParents func() error) (uint32, error) {
	rel := s.Path
	digest, fi, f, err := look(r, rel, true, facts.IsStatDigest(s.Left))
	if f != nil {
		defer f.Close()
	}
	switch {
	case errors.Is(err, errReplaced), err == nil && (f == nil || !fi.Mode().IsRegular()):
		return 0, fmt.Errorf("restore the mode of %s: it is no longer the regular file the plan saw; restore it by hand", rel)
	case err != nil:
		return 0, fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	if why := holds(s, digest, modeOf(fi)); why != "" {
		return 0, fmt.Errorf("restore the mode of %s: %s; restore it by hand", rel, why)
	}
	if err := checkParents(); err != nil {
		return 0, err
	}
	// The file open is the one whose mode changes: not one a link put at
	// the path since leads to.
	m := restoredMode(s, fi.Mode(), true)
	if err := f.Chmod(m); err != nil {
		return 0, fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	return uint32(m.Perm()), nil
}

// restoreFile puts content at s.Path under root, or removes it when
// s.Restore is "", or, for a step that restores a mode only
// (UndoStep.ModeOnly), sets its mode alone. Every step goes through an
// os.Root of the workspace, so nothing outside it is touched; a parent
// directory that is a symbolic link is refused, not followed; and the
// file must still hold s.Left (with s.LeftMode's owner-execute bit, where
// recorded) just before it is replaced. A file written or whose mode is
// restored gets restoredMode's mode, whose permission bits restoreFile
// returns (0 where it removed the path or changed nothing).
func restoreFile(root string, s UndoStep, content []byte) (uint32, error) {
	rel := s.Path
	if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.ContainsRune(rel, 0) || path.Clean(rel) != rel {
		return 0, fmt.Errorf("restore %s: not a clean path inside the workspace", rel)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return 0, fmt.Errorf("restore %s: %w", rel, err)
	}
	defer r.Close()
	checkParents := func() error {
		link, err := linkedParent(r, rel)
		switch {
		case err != nil:
			return fmt.Errorf("restore %s: %w", rel, err)
		case link != "":
			return fmt.Errorf("restore %s: its parent directory %s is a symbolic link; undo does not write through links: restore it by hand", rel, link)
		}
		return nil
	}
	// check looks at the path, and says what is there if it holds s.Left.
	check := func() (fs.FileInfo, error) {
		now, fi, _, err := look(r, rel, false, facts.IsStatDigest(s.Left))
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", rel, err)
		}
		if why := holds(s, now, modeOf(fi)); why != "" {
			return nil, fmt.Errorf("restore %s: %s; restore it by hand", rel, why)
		}
		return fi, nil
	}
	if err := checkParents(); err != nil {
		return 0, err
	}
	switch {
	case s.ModeOnly():
		return restoreMode(r, s, checkParents)
	case s.Restore != "" && s.Restore == s.Left && s.RestoreMode == 0:
		_, err := check() // nothing recorded to restore
		return 0, err
	case s.Restore == "":
		if _, err := check(); err != nil {
			return 0, err
		}
		if err := r.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("remove %s: %w", rel, err)
		}
		return 0, nil
	}
	fi, err := check()
	if err != nil {
		return 0, err
	}
	var mode fs.FileMode
	if fi != nil && fi.Mode().IsRegular() {
		mode = restoredMode(s, fi.Mode(), true)
	} else {
		mode = restoredMode(s, 0, false)
	}
	dir := path.Dir(rel)
	if dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return 0, fmt.Errorf("restore %s: %w", rel, err)
		}
		// A link put in place of a parent meanwhile is refused too.
		if err := checkParents(); err != nil {
			return 0, err
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, ".harness-undo-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("restore %s: %w", rel, err)
	}
	_, werr := f.Write(content)
	var merr error
	if werr == nil {
		merr = f.Chmod(mode)
	}
	if err := errors.Join(werr, merr, f.Close()); err != nil {
		r.Remove(tmp)
		return 0, fmt.Errorf("restore %s: %w", rel, err)
	}
	// The last look before the file is replaced: its parents, and that it
	// still holds what the thread left.
	_, cerr := check()
	if err := errors.Join(checkParents(), cerr); err != nil {
		r.Remove(tmp)
		return 0, err
	}
	if err := r.Rename(tmp, rel); err != nil {
		r.Remove(tmp)
		return 0, fmt.Errorf("restore %s: %w", rel, err)
	}
	return uint32(mode.Perm()), nil
}
