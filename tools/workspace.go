package tools

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// workspace is the directory the tools are confined to.
//
// Confinement is two layers. The first is lexical and gives the clear
// error: a path is made relative to the root (an absolute path must lie
// under it) and must then be local — no ".." that climbs out. The second is
// os.Root: every file operation goes through an *os.Root opened on the
// workspace, which follows a symlink only while it stays beneath the root,
// so a symlinked file or parent directory that leads out — including one a
// command created a moment ago — is refused by construction, with no
// check-then-use window. os.Root also refuses absolute symlink targets,
// even ones that land inside the root.
type workspace struct {
	dir  string // absolute, clean
	real string // dir with its symlinks evaluated, to accept absolute paths spelled either way
}

func newWorkspace(root string) (*workspace, error) {
	dir, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", root, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &workspace{dir: dir, real: real}, nil
}

// open opens the workspace as an os.Root, for one call. Opening per call
// keeps a Set free of open descriptors and of a Close.
func (w *workspace) open() (*os.Root, error) {
	r, err := os.OpenRoot(w.dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return r, nil
}

// rel returns name as a clean, slash-separated path relative to the root,
// or an error naming it when it leaves the workspace lexically. An absolute
// name is accepted when it lies under the root.
func (w *workspace) rel(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: path is empty", ErrInvalidArgs)
	}
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%w: path %q contains a NUL byte", ErrInvalidArgs, name)
	}
	p := filepath.FromSlash(name)
	if filepath.IsAbs(p) {
		r, ok := w.within(p)
		if !ok {
			return "", fmt.Errorf("%w: path %q is absolute and not under the workspace root %s", ErrOutsideWorkspace, name, w.dir)
		}
		p = r
	}
	p = filepath.Clean(p)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("%w: path %q climbs out of the workspace with \"..\"", ErrOutsideWorkspace, name)
	}
	return filepath.ToSlash(p), nil
}

// within makes an absolute path relative to the root, spelled as given or
// with symlinks evaluated.
func (w *workspace) within(abs string) (string, bool) {
	for _, base := range []string{w.dir, w.real} {
		if r, err := filepath.Rel(base, abs); err == nil && filepath.IsLocal(r) {
			return r, true
		}
	}
	return "", false
}

// pathError says what went wrong with the file at rel. An escape through a
// symlink wraps ErrOutsideWorkspace; a missing file wraps fs.ErrNotExist.
func pathError(rel string, err error) error {
	switch {
	case escapes(err):
		return fmt.Errorf("%w: path %q leads outside the workspace through a symlink (or an absolute symlink)", ErrOutsideWorkspace, rel)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("path %q: %w", rel, fs.ErrNotExist)
	}
	return fmt.Errorf("path %q: %w", rel, err)
}

// escapes reports whether err is os.Root refusing a path that leaves it.
// os has no exported sentinel for this; the message is pinned by this
// package's tests, and even were it to change, the operation is still
// refused — only the wording of the error would be less clear.
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// unobserved reports whether the workspace observer (action's) leaves the
// entry at the slash-separated path rel out: any entry named ".git", at any
// depth (a repository's, or the file a worktree or submodule keeps), and
// ".harness" at the root (the runtime's own store). A write there would be
// an effect nobody could observe, so write_file and edit_file refuse it;
// list_files skips these entries, as the observer does.
func unobserved(rel string) bool {
	return path.Base(rel) == ".git" || rel == ".harness"
}

// refuseUnobserved refuses a write to a path at or under an entry the
// observer leaves out.
func refuseUnobserved(rel string) error {
	for i := range len(rel) + 1 {
		if i == len(rel) || rel[i] == '/' {
			if p := rel[:i]; unobserved(p) {
				return fmt.Errorf("path %q is inside %s, which the runtime keeps and does not observe; write elsewhere", rel, p)
			}
		}
	}
	return nil
}

// writeFile makes rel hold data, inside r. A regular file is replaced
// atomically — written to a temporary file beside it, synced, then renamed
// over it — so nobody sees half of it, and its permissions are kept; a new
// file is 0644 (less the umask) and its missing parent directories are
// made. A symlink is written through, in place: os.Root refuses it if it
// leads out of the workspace. It returns whether the file was created and
// its previous size.
func writeFile(r *os.Root, rel string, data []byte) (created bool, prevSize int64, err error) {
	name := filepath.FromSlash(rel)
	if dir := filepath.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return false, 0, pathError(rel, err)
		}
	}
	mode := fs.FileMode(0o644)
	info, err := r.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case err != nil:
		return false, 0, pathError(rel, err)
	case info.IsDir():
		return false, 0, fmt.Errorf("path %q is a directory", rel)
	case info.Mode()&fs.ModeSymlink != 0:
		return writeThrough(r, rel, data)
	case !info.Mode().IsRegular():
		return false, 0, fmt.Errorf("path %q is not a regular file (%s)", rel, info.Mode().Type())
	default:
		mode, prevSize = info.Mode().Perm(), info.Size()
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+rand.Text()[:12])
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return false, 0, pathError(rel, err)
	}
	err = errors.Join(write(f, data), f.Close())
	if err == nil && !created {
		err = r.Chmod(tmp, mode) // OpenFile's mode is less the umask; keep the file's own
	}
	if err == nil {
		err = r.Rename(tmp, name)
	}
	if err != nil {
		_ = r.Remove(tmp)
		return false, 0, pathError(rel, err)
	}
	return created, prevSize, nil
}

func writeThrough(r *os.Root, rel string, data []byte) (bool, int64, error) {
	name := filepath.FromSlash(rel)
	var prev int64
	if info, err := r.Stat(name); err == nil {
		prev = info.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, 0, pathError(rel, err)
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return false, 0, pathError(rel, err)
	}
	if err := errors.Join(write(f, data), f.Close()); err != nil {
		return false, 0, pathError(rel, err)
	}
	return false, prev, nil
}

func write(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}
