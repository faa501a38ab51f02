package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	// removed because it did not exist at To).
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

// UndoStep is one path an undo restores.
type UndoStep struct {
	Path string
	// Left is the digest the thread's last change left ("" for absent);
	// Restore is the digest to put back ("" to remove the path).
	Left, Restore string
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
// command changed is restored like one a write tool changed. It refuses
// with an *UndoError (ErrUndoRefused) naming every path that no longer
// holds what the thread left there, or whose earlier bytes were not kept
// by blobs. It changes nothing.
func PlanUndo(ctx context.Context, store thread.Store, svc Services, id string, to uint64) (UndoPlan, error) {
	plan, _, err := planUndo(ctx, store, svc, id, to)
	return plan, err
}

// Undo restores the files PlanUndo plans to restore, then appends a
// workspace.restored fact recording what it restored, by whom, as an
// ingress fact at the head the plan was made at. Every kept content is
// fetched before any file is touched; each file is replaced whole (written
// beside it, then renamed). A plan with no steps changes nothing and
// appends nothing.
func Undo(ctx context.Context, store thread.Store, svc Services, id string, to uint64, by string) (UndoPlan, error) {
	plan, contents, err := planUndo(ctx, store, svc, id, to)
	if err != nil || len(plan.Steps) == 0 {
		return plan, err
	}
	for _, s := range plan.Steps {
		if err := restoreFile(svc.Workspace, s.Path, s.Restore, contents[s.Restore]); err != nil {
			return plan, fmt.Errorf("undo %s: %w (files before %s in the list are restored; the log records nothing)", id, err, s.Path)
		}
	}
	rec := WorkspaceRestored{To: to, By: by}
	for _, s := range plan.Steps {
		rec.Restored = append(rec.Restored, facts.PathChange{Path: s.Path, Before: s.Left, After: s.Restore})
	}
	d, err := facts.NewDraft(KindWorkspaceRestored, facts.IngressCause("undo-"+strconv.FormatUint(plan.Head, 10)), rec)
	if err != nil {
		return plan, fmt.Errorf("undo %s: %w", id, err)
	}
	if _, err := store.Append(ctx, id, plan.Head, d); err != nil {
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
	type chain struct {
		first, last string
		seqs        []uint64
	}
	chains := map[string]*chain{}
	var order []string
	note := func(seq uint64, cs []facts.PathChange) {
		for _, c := range cs {
			if c.Before == c.After {
				continue // the mode changed, not the content
			}
			ch := chains[c.Path]
			if ch == nil {
				ch = &chain{first: c.Before}
				chains[c.Path] = ch
				order = append(order, c.Path)
			}
			ch.last = c.After
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
	now := make(map[string]string, len(snap.Files))
	for _, fs := range snap.Files {
		now[fs.Path] = fs.Digest
	}
	slices.Sort(order)
	var conflicts []UndoConflict
	contents := map[string][]byte{}
	for _, p := range order {
		ch := chains[p]
		cur := now[p]
		if cur == ch.first {
			continue // already as it was
		}
		if cur != ch.last {
			conflicts = append(conflicts, UndoConflict{Path: p, Left: ch.last, Now: cur,
				Reason: fmt.Sprintf("changed since the thread last touched it at seq %d (it left %s, it holds %s now); restore it by hand, or undo to a later seq",
					ch.seqs[len(ch.seqs)-1], digestWord(ch.last), digestWord(cur))})
			continue
		}
		if ch.first != "" {
			if _, ok := contents[ch.first]; !ok {
				b, err := fetch(ctx, svc.Blobs, ch.first)
				if err != nil {
					conflicts = append(conflicts, UndoConflict{Path: p, Left: ch.last, Now: cur, Reason: err.Error()})
					continue
				}
				contents[ch.first] = b
			}
		}
		plan.Steps = append(plan.Steps, UndoStep{Path: p, Left: ch.last, Restore: ch.first, Seqs: ch.seqs})
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

// restoreFile puts content at rel under root, or removes it when digest is
// "". The file keeps its permissions where it exists.
func restoreFile(root, rel, digest string, content []byte) error {
	path := filepath.Join(root, filepath.FromSlash(rel))
	if digest == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", rel, err)
		}
		return nil
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".harness-undo-*")
	if err != nil {
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	_, werr := tmp.Write(content)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("restore %s: %w", rel, err)
	}
	return nil
}
