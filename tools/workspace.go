package tools

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
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
	// protected are the WithProtected paths, slash-separated and relative
	// to the root, which write_file and edit_file refuse as they refuse
	// ".git" and ".harness".
	protected []string
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
		return escapeError(rel)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("path %q: %w", rel, fs.ErrNotExist)
	}
	return fmt.Errorf("path %q: %w", rel, err)
}

// escapeError is the error for a path at rel that leads out of the
// workspace through a symlink.
func escapeError(rel string) error {
	return fmt.Errorf("%w: path %q leads outside the workspace through a symlink (or an absolute symlink)", ErrOutsideWorkspace, rel)
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

// protect adds the paths WithProtected names, each relative to the root
// or absolute. An absolute path outside the workspace is left out: no file
// tool can reach it.
func (w *workspace) protect(paths []string) error {
	for _, p := range paths {
		if p == "" || strings.ContainsRune(p, 0) {
			return fmt.Errorf("WithProtected: %q is not a path", p)
		}
		q := filepath.FromSlash(p)
		if filepath.IsAbs(q) {
			r, ok := w.within(q)
			if !ok {
				continue
			}
			q = r
		}
		q = filepath.Clean(q)
		if !filepath.IsLocal(q) {
			return fmt.Errorf("WithProtected: %q is not inside the workspace root %s", p, w.dir)
		}
		if q == "." {
			return fmt.Errorf("WithProtected: %q is the workspace root itself", p)
		}
		w.protected = append(w.protected, filepath.ToSlash(q))
	}
	return nil
}

// protectedAt reports the entry at or above the slash-separated path p
// that write_file and edit_file refuse to write in: a ".git" anywhere, or
// one of prot (".harness" and the WithProtected paths, as written and as
// resolved). It returns "" when there is none.
func protectedAt(p string, prot []string) string {
	for i := range len(p) + 1 {
		if i == len(p) || p[i] == '/' {
			if q := p[:i]; path.Base(q) == ".git" || slices.Contains(prot, q) {
				return q
			}
		}
	}
	return ""
}

// refuseProtected refuses, from the path as written, a write to rel at or
// under an entry the runtime keeps. It needs no file system and gives the
// clear error early; checkWritable, which follows symlinks, decides.
func (w *workspace) refuseProtected(rel string) error {
	if q := protectedAt(rel, append([]string{".harness"}, w.protected...)); q != "" {
		return fmt.Errorf("path %q is inside %s, which the runtime keeps and does not observe; write elsewhere", rel, q)
	}
	return nil
}

// checkWritable refuses a write to rel when rel, or where it leads once its
// symlinks are followed — its parent directories' and its own, as os.Root
// follows them — is at or under ".git", the root's ".harness" or a
// WithProtected path (each of those also taken where its own symlinks
// lead). A link g -> .git thus does not open .git/hooks to write_file.
//
// The check is made when the call runs, on the links as they are then; a
// command racing the write to swap a link is not covered (a command can
// write in .git by itself anyway — this refusal keeps the file tools'
// effects observable, it is not a sandbox).
func (w *workspace) checkWritable(r *os.Root, rel string) error {
	if err := w.refuseProtected(rel); err != nil {
		return err
	}
	prot := []string{".harness"}
	prot = append(prot, w.protected...)
	for _, p := range prot {
		if real, err := resolve(r, p); err == nil && !slices.Contains(prot, real) {
			prot = append(prot, real)
		}
	}
	real, err := resolve(r, rel)
	if err != nil {
		return err
	}
	if q := protectedAt(real, prot); q != "" {
		return fmt.Errorf("path %q leads through a symlink to %s, inside %s, which the runtime keeps and does not observe; write elsewhere", rel, real, q)
	}
	return nil
}

// maxLinks is how many symlinks resolve follows in one path before it
// gives up, as Linux does.
const maxLinks = 40

// resolve returns where the slash-separated path rel leads inside r: the
// path relative to the root with every symlink on it followed, its parent
// directories' and its own. From the first entry that is missing (or
// cannot be looked at) on, the rest is taken as written, ".." climbing
// lexically — the part a write would create. A link that leads out of the
// root, or is absolute, is refused as os.Root refuses it. Each step looks
// only at an entry whose parent is already resolved, so r never follows a
// link for it.
func resolve(r *os.Root, rel string) (string, error) {
	var done []string
	todo := strings.Split(rel, "/")
	links, missing := 0, false
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", escapeError(rel)
			}
			done = done[:len(done)-1]
			continue
		}
		next := append(slices.Clip(done), c)
		if missing {
			done = next
			continue
		}
		name := filepath.FromSlash(strings.Join(next, "/"))
		info, err := r.Lstat(name)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			// A missing entry is made by the write; any other error is the
			// write's to report.
			missing = err != nil
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("path %q: more than %d symlinks", rel, maxLinks)
		}
		target, err := r.Readlink(name)
		if err != nil {
			return "", pathError(rel, err)
		}
		if filepath.IsAbs(target) || filepath.VolumeName(target) != "" || strings.HasPrefix(filepath.ToSlash(target), "/") {
			return "", escapeError(rel)
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return strings.Join(done, "/"), nil
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
