package harness

import (
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
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// KindWorkspaceRestored: a person undid the workspace changes of a
// thread's actions (WorkspaceRestored). It is appended from outside the
// runtime, as an ingress fact; no component acts on it.
const KindWorkspaceRestored facts.Kind = "workspace.restored"

func init() { facts.Register[WorkspaceRestored](KindWorkspaceRestored) }

// WorkspaceRestored is the payload of workspace.restored: the paths an
// undo put back as they were when the thread was at seq To.
type WorkspaceRestored struct {
	// To is the seq the workspace was restored to: the changes of the
	// facts after it were undone.
	To uint64 `msgpack:"to,omitempty" json:"to,omitempty"`
	// Restored lists each path with the digest the thread had left there
	// (Before) and the digest restored (After; "" where the path was
	// removed because it did not exist at To), and, where the log recorded
	// them, the permission bits left and restored (BeforeMode, AfterMode).
	Restored []facts.PathChange `msgpack:"restored,omitempty" json:"restored,omitempty"`
	By       string             `msgpack:"by,omitempty" json:"by,omitempty"`
}

// Validate requires at least one path, each named.
func (p WorkspaceRestored) Validate() error {
	if len(p.Restored) == 0 {
		return errors.New("missing restored paths")
	}
	for i, c := range p.Restored {
		if c.Path == "" {
			return fmt.Errorf("restored[%d]: missing path", i)
		}
	}
	return nil
}

// ErrUndoRefused: an undo would overwrite a change the thread did not make,
// or cannot restore a path whose bytes were not kept. The error is an
// *UndoError naming the paths.
var ErrUndoRefused = errors.New("undo refused")

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

// Error names every refused path.
func (e *UndoError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "undo %s refused; nothing was changed:", e.Thread)
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n  %s: %s", c.Path, c.Reason)
	}
	return b.String()
}

// Is reports whether target is ErrUndoRefused.
func (e *UndoError) Is(target error) bool { return target == ErrUndoRefused }

// UndoStep is one path an undo restores. A step whose Left equals its
// Restore restores a mode only: the file's content stays.
type UndoStep struct {
	Path string
	// Left is the digest the thread's last change left ("" for absent);
	// Restore is the digest to put back ("" to remove the path).
	Left, Restore string
	// LeftMode is the permission bits the thread's last change left, which
	// the file must still have; RestoreMode is the permission bits to put
	// back. Either is 0 where the log did not record it (facts written
	// before modes were recorded, a path that was absent or not a regular
	// file): the mode is then not checked, and a restored file keeps the
	// permission bits it has, or gets 0644 if it is created.
	LeftMode, RestoreMode uint32
	// Seqs are the facts whose observed changes touched the path.
	Seqs []uint64
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
// undone. It refuses with an *UndoError (ErrUndoRefused) naming every path
// that no longer holds what the thread left there — its content, and its
// mode where the log recorded it — or whose earlier bytes were not kept by
// blobs. It changes nothing.
func PlanUndo(ctx context.Context, store thread.Store, svc Services, id string, to uint64) (UndoPlan, error) {
	plan, _, err := planUndo(ctx, store, svc, id, to)
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
func Undo(ctx context.Context, store thread.Store, svc Services, id string, to uint64, by string) (UndoPlan, error) {
	unlock, err := resuming.lock(ctx, store, id)
	if err != nil {
		return UndoPlan{}, fmt.Errorf("undo %s: waiting for a resume of the thread: %w", id, err)
	}
	defer unlock()
	ctx, release, err := lease(ctx, store, id)
	if err != nil {
		return UndoPlan{}, fmt.Errorf("undo %s: waiting for the thread's lease: %w", id, err)
	}
	defer release()
	plan, contents, err := planUndo(ctx, store, svc, id, to)
	if err != nil || len(plan.Steps) == 0 {
		return plan, err
	}
	for _, s := range plan.Steps {
		if err := restoreFile(svc.Workspace, s, contents[s.Restore]); err != nil {
			return plan, fmt.Errorf("undo %s: %w (files before %s in the list are restored; the log records nothing)", id, err, s.Path)
		}
	}
	rec := WorkspaceRestored{To: to, By: by}
	for _, s := range plan.Steps {
		rec.Restored = append(rec.Restored, facts.PathChange{Path: s.Path, Before: s.Left, After: s.Restore, BeforeMode: s.LeftMode, AfterMode: s.RestoreMode})
	}
	d, err := facts.NewDraft(KindWorkspaceRestored, facts.IngressCause("undo-"+strconv.FormatUint(plan.Head, 10)), rec)
	if err != nil {
		return plan, fmt.Errorf("undo %s: %w", id, err)
	}
	// The files are back: record it even if the lease was lost meanwhile
	// (the expected head still decides whether the record fits).
	if _, err := store.Append(context.WithoutCancel(ctx), id, plan.Head, d); err != nil {
		return plan, fmt.Errorf("undo %s: the files are restored, but the record could not be appended: %w", id, err)
	}
	return plan, nil
}

func planUndo(ctx context.Context, store thread.Store, svc Services, id string, to uint64) (UndoPlan, map[string][]byte, error) {
	plan := UndoPlan{Thread: id, To: to}
	if svc.Observer == nil || svc.Workspace == "" {
		return plan, nil, fmt.Errorf("undo %s: no workspace observer: nothing can say what the files hold now", id)
	}
	head, err := store.Head(ctx, id)
	if errors.Is(err, thread.ErrNotFound) {
		return plan, nil, fmt.Errorf("undo %s: %w", id, ErrUnknownThread)
	}
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: %w", id, err)
	}
	plan.Head = head.Seq
	if to > head.Seq {
		return plan, nil, fmt.Errorf("undo %s: --to %d is past the thread's last fact (seq %d)", id, to, head.Seq)
	}
	// A path's chain runs from what it held before the first change after
	// to (first) to what the last change left (last); a mode of 0 is one
	// the log did not record.
	type chain struct {
		first, last         string
		firstMode, lastMode uint32
		seqs                []uint64
	}
	chains := map[string]*chain{}
	var order []string
	note := func(seq uint64, cs []facts.PathChange) {
		for _, c := range cs {
			if c.Before == c.After && !c.ModeChanged() {
				// The mode changed, not the content, and the log does
				// not say from what to what (or it is a symlink's).
				continue
			}
			ch := chains[c.Path]
			if ch == nil {
				ch = &chain{first: c.Before, firstMode: c.BeforeMode}
				chains[c.Path] = ch
				order = append(order, c.Path)
			}
			ch.last, ch.lastMode = c.After, c.AfterMode
			ch.seqs = append(ch.seqs, seq)
		}
	}
	for f, err := range store.Read(ctx, id, to+1) {
		if err != nil {
			return plan, nil, fmt.Errorf("undo %s: %w", id, err)
		}
		if f.Seq > head.Seq {
			break
		}
		switch f.Kind {
		case facts.KindActionCompleted:
			p, err := facts.Decode[facts.ActionCompleted](f)
			if err != nil {
				return plan, nil, err
			}
			note(f.Seq, p.Observation.Changed)
		case facts.KindActionInterrupted:
			p, err := facts.Decode[facts.ActionInterrupted](f)
			if err != nil {
				return plan, nil, err
			}
			note(f.Seq, p.Changed)
		case KindWorkspaceRestored:
			p, err := facts.Decode[WorkspaceRestored](f)
			if err != nil {
				return plan, nil, err
			}
			note(f.Seq, p.Restored)
		}
	}
	snap, err := svc.Observer.Observe(ctx)
	if err != nil {
		return plan, nil, fmt.Errorf("undo %s: observe the workspace: %w", id, err)
	}
	type entry struct {
		digest string
		mode   uint32
	}
	now := make(map[string]entry, len(snap.Files))
	for _, f := range snap.Files {
		now[f.Path] = entry{f.Digest, action.PathMode(f.Mode)}
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
		e := now[p]
		cur := e.digest
		if cur == ch.first && (ch.firstMode == 0 || e.mode == ch.firstMode) {
			continue // already as it was
		}
		// The observer does not follow links: behind a parent that is a
		// link now, the path is not the file the thread changed, and a
		// restore would write wherever the link leads.
		if link, err := linkedParent(r, p); err != nil || link != "" {
			reason := fmt.Sprintf("its parent directory %s is a symbolic link now; undo does not write through links: restore it by hand", link)
			if err != nil {
				reason = fmt.Sprintf("its parent directories cannot be checked: %v", err)
			}
			conflicts = append(conflicts, UndoConflict{Path: p, Left: ch.last, Now: cur, LeftMode: ch.lastMode, NowMode: e.mode, Reason: reason})
			continue
		}
		if cur != ch.last {
			conflicts = append(conflicts, UndoConflict{Path: p, Left: ch.last, Now: cur, LeftMode: ch.lastMode, NowMode: e.mode,
				Reason: fmt.Sprintf("changed since the thread last touched it at seq %d (it left %s, it holds %s now); restore it by hand, or undo to a later seq",
					ch.seqs[len(ch.seqs)-1], digestWord(ch.last), digestWord(cur))})
			continue
		}
		if ch.lastMode != 0 && e.mode != ch.lastMode {
			conflicts = append(conflicts, UndoConflict{Path: p, Left: ch.last, Now: cur, LeftMode: ch.lastMode, NowMode: e.mode,
				Reason: fmt.Sprintf("its mode changed since the thread last touched it at seq %d (it left %s, it has %s now); restore it by hand, or undo to a later seq",
					ch.seqs[len(ch.seqs)-1], modeWord(ch.lastMode), modeWord(e.mode))})
			continue
		}
		if ch.first != "" && ch.first != cur {
			if _, ok := contents[ch.first]; !ok {
				b, err := fetch(ctx, svc.Blobs, ch.first)
				if err != nil {
					conflicts = append(conflicts, UndoConflict{Path: p, Left: ch.last, Now: cur, Reason: err.Error()})
					continue
				}
				contents[ch.first] = b
			}
		}
		plan.Steps = append(plan.Steps, UndoStep{Path: p, Left: ch.last, Restore: ch.first, LeftMode: ch.lastMode, RestoreMode: ch.firstMode, Seqs: ch.seqs})
	}
	if len(conflicts) > 0 {
		return plan, nil, &UndoError{Thread: id, Conflicts: conflicts}
	}
	return plan, contents, nil
}

func digestWord(d string) string {
	if d == "" {
		return "nothing (absent)"
	}
	return shortDigest(d)
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
	if blobs == nil {
		return nil, fmt.Errorf("its earlier content %s was not kept: this store keeps no file contents", shortDigest(digest))
	}
	b, err := blobs.GetBlob(ctx, digest)
	if errors.Is(err, action.ErrNoBlob) {
		return nil, fmt.Errorf("its earlier content %s was not kept (larger than %d bytes, or never read)", shortDigest(digest), action.DefaultBlobCap)
	}
	if err != nil {
		return nil, fmt.Errorf("read kept content %s: %w", shortDigest(digest), err)
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

// stateIn is the digest and the mode the workspace observer gives rel
// inside r now: the SHA-256 of a regular file's bytes or of a symlink's
// target, "" for a path that does not exist; and action.PathMode of its
// mode.
func stateIn(r *os.Root, rel string) (digest string, mode uint32, err error) {
	fi, err := r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", 0, nil
	case err != nil:
		return "", 0, err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := r.Readlink(rel)
		if err != nil {
			return "", 0, err
		}
		sum := sha256.Sum256([]byte(target))
		return hex.EncodeToString(sum[:]), 0, nil
	case !fi.Mode().IsRegular():
		return "", 0, fmt.Errorf("it is not a regular file (%v)", fi.Mode().Type())
	}
	f, err := r.Open(rel)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	digest, err = digestOf(f)
	return digest, action.PathMode(fi.Mode()), err
}

// digestOf is the SHA-256 of what is left to read of f.
func digestOf(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// holds says why a path planned to hold s.Left (and s.LeftMode, where
// recorded) does not now, or "" if it does.
func holds(s UndoStep, digest string, mode uint32) string {
	switch {
	case digest != s.Left:
		return fmt.Sprintf("changed while the undo ran (it held %s when planned, %s now)", digestWord(s.Left), digestWord(digest))
	case s.LeftMode != 0 && mode != s.LeftMode:
		return fmt.Sprintf("its mode changed while the undo ran (%s when planned, %s now)", modeWord(s.LeftMode), modeWord(mode))
	}
	return ""
}

// restoreMode sets the permission bits of the regular file s.Path inside r
// to s.RestoreMode, leaving its content, once it has checked, on the file
// it changes, that the file still holds s.Left and has s.LeftMode, and,
// with checkParents, that no parent directory is a link.
func restoreMode(r *os.Root, s UndoStep, checkParents func() error) error {
	rel := s.Path
	replaced := fmt.Errorf("restore the mode of %s: it is no longer the regular file the plan saw; restore it by hand", rel)
	fi, err := r.Lstat(rel)
	if err != nil {
		return fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return replaced
	}
	f, err := r.Open(rel)
	if err != nil {
		return fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	// The file opened must be the one at the path, not one a link put
	// there since leads to: it is the one whose mode changes.
	if !os.SameFile(fi, opened) {
		return replaced
	}
	digest, err := digestOf(f)
	if err != nil {
		return fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	if why := holds(s, digest, action.PathMode(opened.Mode())); why != "" {
		return fmt.Errorf("restore the mode of %s: %s; restore it by hand", rel, why)
	}
	if err := checkParents(); err != nil {
		return err
	}
	if err := f.Chmod(fs.FileMode(s.RestoreMode).Perm()); err != nil {
		return fmt.Errorf("restore the mode of %s: %w", rel, err)
	}
	return nil
}

// restoreFile puts content at s.Path under root with s.RestoreMode, or
// removes it when s.Restore is "", or, when s.Restore is s.Left, sets its
// mode alone to s.RestoreMode. Every step goes through an os.Root of the
// workspace, so nothing outside it is touched; a parent directory that is
// a symbolic link is refused, not followed; and the file must still hold
// s.Left (with s.LeftMode, where recorded) just before it is replaced.
// Where s.RestoreMode is not recorded, the file keeps its permissions where
// it exists and gets 0644 where it does not.
func restoreFile(root string, s UndoStep, content []byte) error {
	rel := s.Path
	if _, ok := WorkspacePath("", rel); !ok || path.Clean(rel) != rel {
		return fmt.Errorf("restore %s: not a clean path inside the workspace", rel)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
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
	checkDigest := func() error {
		now, mode, err := stateIn(r, rel)
		if err != nil {
			return fmt.Errorf("restore %s: %w", rel, err)
		}
		if why := holds(s, now, mode); why != "" {
			return fmt.Errorf("restore %s: %s; restore it by hand", rel, why)
		}
		return nil
	}
	if err := checkParents(); err != nil {
		return err
	}
	if s.Restore != "" && s.Restore == s.Left {
		if s.RestoreMode == 0 {
			return checkDigest() // nothing recorded to restore
		}
		return restoreMode(r, s, checkParents)
	}
	if s.Restore == "" {
		if err := checkDigest(); err != nil {
			return err
		}
		if err := r.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", rel, err)
		}
		return nil
	}
	mode := fs.FileMode(s.RestoreMode).Perm()
	if s.RestoreMode == 0 {
		mode = 0o644
		if fi, err := r.Lstat(rel); err == nil && fi.Mode().IsRegular() {
			mode = fi.Mode().Perm()
		}
	}
	dir := path.Dir(rel)
	if dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("restore %s: %w", rel, err)
		}
		// A link put in place of a parent meanwhile is refused too.
		if err := checkParents(); err != nil {
			return err
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, ".harness-undo-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	_, werr := f.Write(content)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, r.Chmod(tmp, mode)); err != nil {
		r.Remove(tmp)
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	// The last look before the file is replaced: its parents, and that it
	// still holds what the thread left.
	if err := errors.Join(checkParents(), checkDigest()); err != nil {
		r.Remove(tmp)
		return err
	}
	if err := r.Rename(tmp, rel); err != nil {
		r.Remove(tmp)
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	return nil
}
