package rerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// checkScratch refuses a live rerun whose scratch workspace is none, or
// the workspace itself, or inside it, or holds it.
func checkScratch(source, scratch string) error {
	if source == "" || scratch == "" {
		return fmt.Errorf("%w: a live rerun needs the workspace and a scratch copy of it", ErrLiveRefused)
	}
	src, err := realDir(source)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLiveRefused, err)
	}
	dst, err := realDir(scratch)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLiveRefused, err)
	}
	if within(src, dst) || within(dst, src) {
		return fmt.Errorf("%w: the scratch copy %s and the workspace %s must be apart", ErrLiveRefused, dst, src)
	}
	return nil
}

// sameScratch refuses to go on with live rerun id anywhere but in the
// scratch copy it recorded (dir, followed), or when that copy is gone or
// not this user's alone (ScratchOf), or (when unchanged is set: it has
// not ended) changed since the rerun last observed it: its last
// observation of its own (not one served from the original) that found
// it at rest — an action's completion, a change between actions — must
// be what obs reads now. A rerun cut off before it acted in the copy has
// none to compare.
func sameScratch(ctx context.Context, store thread.Store, id, dir string, obs action.Observer, unchanged bool) error {
	recorded, err := ScratchOf(ctx, store, id)
	if err != nil {
		return err
	}
	if recorded != dir {
		return fmt.Errorf("%w: the live rerun %s goes on in %s, where it began, not in %s", ErrScratch, id, recorded, dir)
	}
	if !unchanged || obs == nil {
		return nil
	}
	var last *action.Observed
	atRest := false
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return fmt.Errorf("read %s: %w", id, err)
		}
		switch f.Kind {
		case facts.KindThreadForked:
			continue
		case facts.KindActionCompleted:
			p, err := facts.Decode[facts.ActionCompleted](f)
			if err != nil {
				return err
			}
			if p.Served != nil {
				continue
			}
		}
		o, ok, err := action.ObservedIn(f)
		if err != nil {
			return err
		}
		if ok {
			last, atRest = &o, f.Kind == facts.KindActionCompleted || f.Kind == facts.KindWorkspaceChanged
		}
	}
	if last == nil || !atRest || last.Hash == "" {
		return nil
	}
	now, err := obs.Observe(ctx)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrScratch, recorded, err)
	}
	if now.Hash != last.Hash {
		return fmt.Errorf("%w %s changed since the live rerun %s last observed it (at seq %d): it cannot go on there: rerun it under another id", ErrScratch, recorded, id, last.Seq)
	}
	return nil
}

// realDir is dir absolute, its symlinks followed.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// CopyWorkspace copies the workspace src into the empty directory dst:
// its directories, regular files (with their permission bits) and
// symlinks (as links: never followed), but not the paths skip names (a
// store inside it) nor anything else (devices, sockets, pipes).
func CopyWorkspace(src, dst string, skip []string) error {
	entries, err := os.ReadDir(dst)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("scratch copy: %s is not empty", dst)
	}
	var skipped []string
	for _, s := range skip {
		if abs, err := filepath.Abs(s); err == nil {
			skipped = append(skipped, abs)
		}
	}
	src, err = filepath.Abs(src)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("scratch copy: %w", err)
		}
		for _, s := range skipped {
			if path == s {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("scratch copy: %w", err)
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return fmt.Errorf("scratch copy: %w", err)
			}
			return os.Symlink(link, to)
		case d.Type().IsRegular():
			return copyFile(path, to, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(from, to string, perm fs.FileMode) (err error) {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	return nil
}

// ScratchOf returns the scratch copy the live rerun id records, to go
// on in: "" when there is no thread id yet (a new live rerun makes its
// copy). It is ErrScratch when id records none, or its copy is gone, or
// is not this user's alone (another user's, or writable by others); and
// ErrNotRerun when id is no live rerun.
func ScratchOf(ctx context.Context, store thread.Store, id string) (string, error) {
	if _, err := store.Head(ctx, id); errors.Is(err, thread.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("rerun %s: %w", id, err)
	}
	r, err := Read(ctx, store, id)
	if err != nil {
		return "", err
	}
	switch {
	case r.Rerun == nil || !r.Rerun.Live:
		return "", fmt.Errorf("%s is no live rerun: %w", id, ErrNotRerun)
	case r.Rerun.Scratch == "":
		return "", fmt.Errorf("%w: the live rerun %s records none (it was made before they were kept): rerun it under another id", ErrScratch, id)
	}
	info, err := os.Lstat(r.Rerun.Scratch)
	if err != nil || !info.IsDir() {
		return "", fmt.Errorf("%w %s is gone: the live rerun %s cannot go on: rerun it under another id", ErrScratch, r.Rerun.Scratch, id)
	}
	if err := ownScratch(r.Rerun.Scratch, info); err != nil {
		return "", err
	}
	return r.Rerun.Scratch, nil
}
