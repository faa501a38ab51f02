package tools

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// workspace is the directory the tools are confined to.
//
// Confinement is two layers. The first is lexical and gives the clear
// error: a path is made relative to the root (an absolute path must lie
// under it) and must then be local — no ".." that climbs out. The second
// is os.Root: every file operation goes through an *os.Root opened on the
// workspace, which follows a symlink only while it stays beneath the
// root, so a symlinked file or parent directory that leads out —
// including one a command created a moment ago — is refused by
// construction. os.Root also refuses absolute symlink targets, even ones
// that land inside the root. read_file opens its file through the root in
// one call; write_file and edit_file walk their path (see walk), holding
// each directory on the way open, judge where it leads, and then make,
// read and rename files by name in the one directory the walk opened.
type workspace struct {
	dir  string // absolute, clean
	real string // dir with its symlinks evaluated, to accept absolute paths spelled either way
	// protected are the WithProtected paths, slash-separated and relative
	// to the root, which write_file and edit_file refuse as they refuse
	// ".git" and ".harness".
	protected []string
	// hidden are the paths inside the root that read_file does not read
	// at or under, slash-separated: the sandbox's Hidden paths there (the
	// store under any name, the user's settings and tokens when the
	// workspace holds them), which no command sees either; hiddenNames
	// are names hidden at any depth (".harness", and the sandbox's
	// HiddenNames).
	hidden      []string
	hiddenNames []string
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
// ".harness" at the root (the runtime's own store). list_files skips these
// entries, as the observer does.
func unobserved(rel string) bool {
	return path.Base(rel) == ".git" || rel == ".harness"
}

// kept reports whether an entry named name is one write_file and edit_file
// never write in, at any depth: a ".git" (a repository, or the file a
// worktree or submodule keeps) or a ".harness" (a store: the root's, or
// one that a later run in a subdirectory would adopt, settings and all).
// Names are compared ignoring case, as a case-insensitive file system
// would compare them.
func kept(name string) bool {
	return strings.EqualFold(name, ".git") || strings.EqualFold(name, ".harness")
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

// hide takes the paths a command cannot see from the sandbox's spec: read_file
// does not read them either.
func (w *workspace) hide(spec sandbox.Spec) {
	w.hiddenNames = addProtected([]string{sandbox.StoreName}, spec.HiddenNames...)
	for _, h := range spec.Hidden {
		if rel, ok := w.within(h); ok {
			if q := filepath.ToSlash(filepath.Clean(rel)); q != "." {
				w.hidden = addProtected(w.hidden, q)
			}
		}
	}
}

// hiddenAt reports the entry at or above the slash-separated path p that
// read_file does not read: a hidden name at any depth, or one of hide.
// "" when there is none.
func (w *workspace) hiddenAt(p string, hide []string) string {
	for i := range len(p) + 1 {
		if i == len(p) || p[i] == '/' {
			q := p[:i]
			if slices.Contains(hide, q) || slices.ContainsFunc(w.hiddenNames, func(n string) bool { return strings.EqualFold(path.Base(q), n) }) {
				return q
			}
		}
	}
	return ""
}

// hiddenIn is what read_file does not read beside the hidden names: the
// hidden paths, and where they and the root's .harness lead, in the root
// and as the host follows them.
func (w *workspace) hiddenIn(r *os.Root) []string {
	hide := slices.Clone(w.hidden)
	for _, p := range append([]string{sandbox.StoreName}, w.hidden...) {
		if s, err := walk(r, p, resolveOnly, nil); err == nil {
			if s.real != "." {
				hide = addProtected(hide, s.real)
			}
			s.close()
		}
		if real, ok := hostEnd(filepath.Join(w.real, filepath.FromSlash(p))); ok {
			if rel, ok := w.within(real); ok {
				if q := filepath.ToSlash(filepath.Clean(rel)); q != "." {
					hide = addProtected(hide, q)
				}
			}
		}
	}
	return hide
}

// readable walks to rel for read_file and refuses it when rel, as written
// or where it leads, is at or under what no command may see either: the
// store (".harness" at any depth, or under any name), the user's settings
// and tokens. The spot it returns holds the directory the file is in,
// opened once; close it.
func (w *workspace) readable(r *os.Root, rel string) (*spot, error) {
	return w.readableIn(r, rel, w.hiddenIn(r))
}

// readableIn is readable with hide, what hiddenIn gives for r, taken
// already.
func (w *workspace) readableIn(r *os.Root, rel string, hide []string) (*spot, error) {
	if q := w.hiddenAt(rel, w.hidden); q != "" {
		return nil, hiddenError(rel, rel, q)
	}
	s, err := walk(r, rel, resolveOnly, nil)
	if err != nil {
		return nil, err
	}
	if q := w.hiddenAt(s.real, hide); q != "" {
		s.close()
		return nil, hiddenError(rel, s.real, q)
	}
	return s, nil
}

// readableNow returns the refusal a read of rel meets as the workspace is
// now (see readable).
func (w *workspace) readableNow(rel string) error {
	r, err := w.open()
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := w.readable(r, rel)
	if err != nil {
		return err
	}
	s.close()
	return nil
}

// hiddenError is the refusal of a read of rel, which leads to real, at or
// under the hidden entry q.
func hiddenError(rel, real, q string) error {
	return refusal(rel, real, q, "which holds the runtime's store or your settings: neither the model's tools nor its commands read it")
}

// refusal is the keptError of rel, which leads to real, at or under q,
// which is what says.
func refusal(rel, real, q, what string) keptError {
	e := keptError{rel: rel, real: real, q: q}
	if real == rel {
		e.msg = fmt.Sprintf("path %q is inside %s, %s", rel, q, what)
	} else {
		e.msg = fmt.Sprintf("path %q leads through a symlink to %s, inside %s, %s", rel, real, q, what)
	}
	return e
}

// protectedAt reports the entry at or above the slash-separated path p
// that write_file and edit_file refuse to write in: a ".git" or ".harness"
// anywhere, or one of prot. It returns "" when there is none.
func protectedAt(p string, prot []string) string {
	for i := range len(p) + 1 {
		if i == len(p) || p[i] == '/' {
			if q := p[:i]; kept(path.Base(q)) || slices.Contains(prot, q) {
				return q
			}
		}
	}
	return ""
}

// refuseProtected refuses, from the path as written, a write to rel at or
// under an entry the runtime keeps. It needs no file system and gives the
// clear error early; the walk to where rel leads decides.
func (w *workspace) refuseProtected(rel string) error {
	if q := protectedAt(rel, w.protected); q != "" {
		return protectedError(rel, rel, q)
	}
	return nil
}

// protectedIn returns what is protected beside ".git" and ".harness"
// components: the WithProtected paths, and where they and the root's
// .harness and .git lead once their symlinks are followed (a .harness ->
// store protects store; a .git -> meta, which the person's git follows,
// protects meta, whether or not it exists yet). A root .git that leads to
// the root itself makes the root the git directory: its control entries
// (gitControl) are protected then.
func (w *workspace) protectedIn(r *os.Root) ([]string, map[string]string) {
	prot := slices.Clone(w.protected)
	for _, p := range append([]string{".harness", ".git"}, w.protected...) {
		s, err := walk(r, p, resolveOnly, nil)
		if err != nil {
			continue
		}
		switch {
		case s.real == "." && p == ".git":
			prot = addProtected(prot, gitControl...)
		case s.real != ".":
			prot = addProtected(prot, s.real)
		}
		s.close()
	}
	return w.protectHost(prot)
}

// protectHost adds to prot what the root's .git and .harness lead to as
// the host follows them (the sandbox's GitPathsOf; absolute links and
// links that leave the root and come back, which the walk in the root
// cannot follow, and a .git file's "gitdir: DIR", which git follows):
// each git directory git would take for the workspace's, and its
// control entries, inside the root, and where those that are symbolic
// links lead; and the hooks directories and included config files the
// git configs name inside the root (sandbox.GitPaths.Named), with why,
// by entry, for the refusal.
func (w *workspace) protectHost(prot []string) ([]string, map[string]string) {
	add := func(abs string) string {
		rel, ok := w.within(abs)
		if !ok {
			return ""
		}
		q := filepath.ToSlash(filepath.Clean(rel))
		if q == "." {
			prot = addProtected(prot, gitControl...)
			return ""
		}
		prot = addProtected(prot, q)
		return q
	}
	g := sandbox.GitPathsOf(w.real)
	why := map[string]string{}
	for _, n := range g.Named {
		if q := add(n.Path); q != "" && why[q] == "" {
			why[q] = n.Why()
		}
	}
	if g.Pin != "" && g.Pin != filepath.Join(w.real, ".git") {
		add(g.Pin)
	}
	for _, d := range g.Kept {
		add(d)
	}
	for _, p := range g.ReadOnly {
		if p != filepath.Join(w.real, ".git") {
			add(p)
		}
		// A control entry that is a symbolic link (.git/config ->
		// ../dot/gitconfig, hooks -> ../shared-hooks, a commondir link):
		// git reads where it leads, which the sandbox makes read-only by
		// following it; so is it here, existing or not.
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if real, ok := hostEnd(p); ok {
				add(real)
			}
		}
	}
	for _, p := range []string{".harness", ".git"} {
		if real, ok := hostEnd(filepath.Join(w.real, p)); ok && real != filepath.Join(w.real, p) {
			add(real)
		}
	}
	return prot, why
}

// hostEnd is where the path p leads on the host, its links followed; when
// only its last entry is missing, that entry under where its parent
// leads.
func hostEnd(p string) (string, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, true
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	target, err := os.Readlink(p)
	if err != nil {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(p), target)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(target))
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, filepath.Base(target)), true
}

// addProtected appends to prot each of qs it does not hold yet.
func addProtected(prot []string, qs ...string) []string {
	for _, q := range qs {
		if !slices.Contains(prot, q) {
			prot = append(prot, q)
		}
	}
	return prot
}

// gitControl are the entries of a git directory that name or hold a
// program git runs, or say where its config is.
var gitControl = []string{"hooks", "config", "info", "commondir", "config.worktree"}

// gitDirControl finds, on the path names (entries from the root), the
// first directory that is a git directory and whose entry on the path is
// one of gitControl: the control entry q and the git directory d (both
// relative to the root, slash-separated), or "". dirs are the directories
// the walk holds open: dirs[k] is names[:k]. A nested repository's .git
// file or link may lead to any such directory (git init
// --separate-git-dir, a submodule made by hand), and the person's git in
// that repository reads its config and runs its hooks; a bare repository
// runs its hooks when pushed to. So every git directory in the workspace
// is kept as .git is, wherever its .git lies.
func gitDirControl(dirs []*os.Root, names []string) (q, d string) {
	for k, dir := range dirs {
		if k >= len(names) || !slices.Contains(gitControl, names[k]) || !isGitDirIn(dir) {
			continue
		}
		return join(names[:k+1]), cmp.Or(join(names[:k]), ".")
	}
	return "", ""
}

// isGitDirIn reports whether the directory dir is one git takes for a git
// directory: it holds a HEAD file, and an objects directory or a
// commondir (a linked worktree's).
func isGitDirIn(dir *os.Root) bool {
	fi, err := dir.Lstat("HEAD")
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if fi, err := dir.Lstat("objects"); err == nil && fi.IsDir() {
		return true
	}
	_, err = dir.Lstat("commondir")
	return err == nil
}

// gitDirError is the refusal of a write to rel, which leads to real, at or
// under the control entry q of the git directory d.
func gitDirError(rel, real, q, d string) error {
	return protectedWhy(rel, real, q, "a control entry of the git directory "+d+" (a nested repository's .git may lead there)")
}

// protectedError is the refusal of a write to rel, which leads to real,
// at or under the protected entry q.
func protectedError(rel, real, q string) error {
	return protectedWhy(rel, real, q, "")
}

// protectedWhy is protectedError of an entry q that a git config names
// (why says which and where: see sandbox.NamedPath.Why), when why is not
// "": git reads or runs what is there.
func protectedWhy(rel, real, q, why string) error {
	kept := "which the runtime keeps and does not observe"
	if why != "" {
		kept = "which the runtime keeps: " + why + ", whose content the person's git reads or runs"
	}
	return refusal(rel, real, q, kept+"; write elsewhere")
}

// keptError is a protectedError; it wraps ErrProtected.
type keptError struct {
	msg          string
	rel, real, q string // the path written, where it leads, the protected entry
}

func (e keptError) Error() string { return e.msg }
func (e keptError) Unwrap() error { return ErrProtected }

// explain is err, when it is the protectedError of an entry a git config
// names (why, by entry), made to say so; any other error as it is.
func explain(err error, why map[string]string) error {
	if ke, ok := err.(keptError); ok && why[ke.q] != "" {
		return protectedWhy(ke.rel, ke.real, ke.q, why[ke.q])
	}
	return err
}

// resolve returns where the clean path rel leads inside the workspace, as
// a walk finds it, changing nothing.
func (w *workspace) resolve(rel string) (string, error) {
	r, err := w.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	s, err := walk(r, rel, resolveOnly, nil)
	if err != nil {
		return "", err
	}
	s.close()
	return s.real, nil
}

// resolves returns the error rel meets on the way to where it leads: it
// leaves the workspace through a symlink, or cannot be followed.
func (w *workspace) resolves(rel string) error {
	_, err := w.resolve(rel)
	return err
}

// writeCheck returns the refusal a write to a path meets as the workspace
// is now (writableNow), for many paths: the root is opened, and what is
// protected read, once. Call done when finished.
func (w *workspace) writeCheck() (check func(rel string) error, done func(), err error) {
	r, err := w.open()
	if err != nil {
		return nil, nil, err
	}
	prot, why := w.protectedIn(r)
	check = func(rel string) error {
		s, err := w.writableIn(r, rel, resolveOnly, prot, why)
		if err != nil {
			return err
		}
		s.close()
		return nil
	}
	return check, func() { r.Close() }, nil
}

// writableNow returns the refusal a write to rel meets as the workspace is
// now (see writable), changing nothing.
func (w *workspace) writableNow(rel string) error {
	r, err := w.open()
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := w.writable(r, rel, resolveOnly)
	if err != nil {
		return err
	}
	s.close()
	return nil
}

// writable walks to rel for write_file (mode forWrite) or edit_file
// (forEdit), or to check such a write without making anything
// (resolveOnly), and refuses it when rel, as written or where it leads, is
// at or under an entry the runtime keeps: a ".git" or ".harness" at any
// depth, or a WithProtected path (each of those also taken where its own
// symlinks lead). A link g -> .git thus does not open .git/hooks to
// write_file. The spot it returns holds the parent directory the write
// goes to, opened once; close it.
func (w *workspace) writable(r *os.Root, rel string, mode walkMode) (*spot, error) {
	prot, why := w.protectedIn(r)
	return w.writableIn(r, rel, mode, prot, why)
}

// writableIn is writable with what is protected, and why, read already
// (protectedIn).
func (w *workspace) writableIn(r *os.Root, rel string, mode walkMode, prot []string, why map[string]string) (*spot, error) {
	if err := w.refuseProtected(rel); err != nil {
		return nil, err
	}
	s, err := walk(r, rel, mode, prot)
	if err != nil {
		return nil, explain(err, why)
	}
	if q := protectedAt(s.real, prot); q != "" {
		s.close()
		return nil, protectedWhy(rel, s.real, q, why[q])
	}
	if q, d := gitDirControl(append([]*os.Root{r}, s.held...), splitPath(s.real)); q != "" {
		s.close()
		return nil, gitDirError(rel, s.real, q, d)
	}
	return s, nil
}

// walkMode says what a walk does about the entries of a path that do not
// exist yet.
type walkMode int

const (
	// resolveOnly changes nothing: from the first entry that is missing
	// or is not a directory on, the rest of the path is taken as written.
	resolveOnly walkMode = iota
	// forWrite makes the missing parent directories, once it is sure that
	// where the path then leads is not protected.
	forWrite
	// forEdit makes nothing: a missing parent is a missing file.
	forEdit
)

const (
	// maxLinks is how many symlinks a walk follows in one path before it
	// gives up, as Linux does.
	maxLinks = 40
	// maxDepth is how many directories deep a walk goes, each held open.
	maxDepth = 255
	// maxSteps bounds a walk's steps, whatever the links and races.
	maxSteps = 4096
	// maxRaces is how many times a walk looks again at an entry that
	// changed between a look and an open before it gives up.
	maxRaces = 8
)

// errSwapped: what was opened is not the directory that was looked at.
var errSwapped = errors.New("swapped")

// spot is where a path leads inside the workspace, found by one walk.
type spot struct {
	rel   string // the path as given, for errors
	real  string // where it leads: clean, slash-separated, relative to the root; "." for the root
	links int    // symlinks followed on the way
	// dir is the directory the path's last entry is in, opened by the
	// walk, and base that entry's name. dir is nil when a resolveOnly walk
	// stopped at a missing entry or one that is not a directory; base is
	// "" when the path leads to a directory it ended on with "..".
	dir  *os.Root
	base string
	info fs.FileInfo // base as found in dir (not followed), nil if missing
	held []*os.Root
}

func (s *spot) close() {
	for _, d := range s.held {
		_ = d.Close()
	}
	s.held = nil
}

// walk follows the slash-separated path rel, which rel() has made clean
// and local, from r one entry at a time, the way os.Root resolves a path
// (a symlink is followed while it stays beneath the root; an absolute
// link target, or one that climbs out, is refused) — but holding each
// directory it passes open, so that what it found is what a write then
// uses: nothing on the way is resolved twice. Each directory is opened as
// a directory (it cannot be a named pipe that blocks the open), and a
// directory swapped for something else between the look at its name and
// the open is noticed and refused (os.SameFile), so a write cannot be
// led, mid-walk, somewhere its path no longer says.
//
// For forWrite, a missing directory is made (0755, less the umask) only
// once protectedAt has cleared where the path then leads: prot is what is
// protected beside ".git" and ".harness".
func walk(r *os.Root, rel string, mode walkMode, prot []string) (*spot, error) {
	s := &spot{rel: rel}
	dirs := []*os.Root{r}
	var names []string
	fail := func(err error) (*spot, error) {
		for _, d := range dirs[1:] {
			_ = d.Close()
		}
		return nil, err
	}
	todo := splitPath(rel)
	races := 0
	for steps := 0; len(todo) > 0; steps++ {
		if steps > maxSteps {
			return fail(fmt.Errorf("path %q: too many steps to resolve", rel))
		}
		c := todo[0]
		if c == ".." {
			if len(names) == 0 {
				return fail(escapeError(rel))
			}
			names = names[:len(names)-1]
			_ = dirs[len(dirs)-1].Close()
			dirs = dirs[:len(dirs)-1]
			todo = todo[1:]
			continue
		}
		cur := dirs[len(dirs)-1]
		info, err := cur.Lstat(c)
		missing := errors.Is(err, fs.ErrNotExist)
		switch {
		case err != nil && !missing:
			return fail(pathError(rel, err))
		case !missing && info.Mode()&fs.ModeSymlink != 0:
			if s.links++; s.links > maxLinks {
				return fail(fmt.Errorf("path %q: more than %d symlinks", rel, maxLinks))
			}
			target, err := cur.Readlink(c)
			if errors.Is(err, syscall.EINVAL) || errors.Is(err, fs.ErrNotExist) {
				s.links-- // no longer a link, or gone, since Lstat: look again
				continue
			}
			if err != nil {
				return fail(pathError(rel, err))
			}
			if filepath.IsAbs(target) || filepath.VolumeName(target) != "" || strings.HasPrefix(filepath.ToSlash(target), "/") {
				return fail(escapeError(rel))
			}
			todo = append(splitPath(target), todo[1:]...)
			continue
		case len(todo) == 1:
			// The last entry: what the call reads, writes or replaces.
			s.dir, s.base = cur, c
			if !missing {
				s.info = info
			}
			names = append(names, c)
			todo = nil
			continue
		case !missing && info.IsDir():
			if len(dirs) > maxDepth {
				return fail(fmt.Errorf("path %q is more than %d directories deep", rel, maxDepth))
			}
			// c + "/." opens c as a directory (O_DIRECTORY): a name
			// swapped for a named pipe fails instead of blocking.
			sub, err := cur.OpenRoot(c + string(filepath.Separator) + ".")
			if err == nil {
				now, serr := sub.Stat(".")
				if serr != nil || !os.SameFile(info, now) {
					_ = sub.Close()
					sub, err = nil, errSwapped
				}
			}
			if err != nil {
				// c was a directory a moment ago: it was swapped (for a
				// link, a pipe, another directory), or is gone. Look again,
				// a few times; what is there then decides.
				if races++; races > maxRaces {
					return fail(fmt.Errorf("path %q: %s keeps changing while it is opened (it is no longer the directory it was); nothing was written", rel, join(names, c)))
				}
				continue
			}
			dirs = append(dirs, sub)
			names = append(names, c)
			todo = todo[1:]
			continue
		}
		// c is missing, or is not a directory, and more follows. From
		// here on nothing is a symlink (what is made is made plain), so a
		// ".." later on cancels what comes before it, as os.Root cancels
		// it.
		if rest := cleanParts(todo); len(rest) != len(todo) {
			todo = rest
			continue
		}
		switch {
		case mode == resolveOnly:
			names = append(names, todo...)
			todo = nil
		case !missing:
			return fail(fmt.Errorf("path %q: %s is %s, not a directory", rel, join(names, c), action.FileKind(info.Mode())))
		case mode == forEdit:
			return fail(pathError(rel, fs.ErrNotExist))
		default:
			if q := protectedAt(join(names, todo...), prot); q != "" {
				return fail(protectedError(rel, join(names, todo...), q))
			}
			if q, d := gitDirControl(dirs, append(slices.Clone(names), todo...)); q != "" {
				return fail(gitDirError(rel, join(names, todo...), q, d))
			}
			if err := cur.Mkdir(c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fail(pathError(rel, err))
			}
			// Look at c again: it is a directory now (or whatever raced
			// to take its place, which the next step judges).
		}
	}
	s.real = join(names)
	s.held = dirs[1:]
	return s, nil
}

// splitPath splits a slash-separated path into its entries, leaving out
// empty ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// cleanParts cancels each ".." against the entry before it.
func cleanParts(parts []string) []string {
	var out []string
	for _, p := range parts {
		if p == ".." && len(out) > 0 && out[len(out)-1] != ".." {
			out = out[:len(out)-1]
			continue
		}
		out = append(out, p)
	}
	return out
}

// join joins entries into a slash-separated path; none is ".".
func join(names []string, more ...string) string {
	all := append(slices.Clip(names), more...)
	if len(all) == 0 {
		return "."
	}
	return strings.Join(all, "/")
}

// notRegularError is the refusal of a path that leads to something other
// than a regular file: a named pipe's open or read would wait for a
// writer, a device's read would never end.
type notRegularError struct {
	rel  string
	mode fs.FileMode
}

func (e notRegularError) Error() string {
	return fmt.Sprintf("path %q is %s, not a regular file; the file tools read and write only regular files", e.rel, action.FileKind(e.mode))
}

func (e notRegularError) Unwrap() error { return action.ErrNotRegular }

// tooLargeError is the refusal of a file larger than a tool reads.
func tooLargeError(rel string, size, limit int64) error {
	return fmt.Errorf("path %q is %d bytes, more than the %d a file tool reads whole; change it with run_command", rel, size, limit)
}

// readAll reads the regular file s leads to, at most limit bytes of it,
// through the directory the walk opened: the file is the one the walk
// found (os.SameFile), opened without blocking.
func (s *spot) readAll(limit int64) ([]byte, error) {
	switch {
	case s.base == "" || s.info != nil && s.info.IsDir():
		return nil, fmt.Errorf("path %q is a directory", s.rel)
	case s.info == nil:
		return nil, pathError(s.rel, fs.ErrNotExist)
	case !s.info.Mode().IsRegular():
		return nil, notRegularError{s.rel, s.info.Mode()}
	case s.info.Size() > limit:
		return nil, tooLargeError(s.rel, s.info.Size(), limit)
	}
	f, info, err := action.OpenRegular(s.dir, s.base)
	switch {
	case errors.Is(err, action.ErrNotRegular):
		return nil, notRegularError{s.rel, info.Mode()}
	case err != nil:
		return nil, pathError(s.rel, err)
	}
	defer f.Close()
	if !os.SameFile(info, s.info) {
		return nil, fmt.Errorf("path %q changed while it was being opened; nothing was written", s.rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, pathError(s.rel, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLargeError(s.rel, int64(len(data)), limit)
	}
	return data, nil
}

// writeFile makes the file s leads to hold data. It is replaced
// atomically — data is written to a temporary file beside it, synced, and
// renamed over it — so nobody sees half of it, and its permissions are
// kept; a new file is 0644 (less the umask). The temporary file is made,
// and renamed, in the one directory the walk opened, by name: no path is
// resolved again, so a directory swapped for a symlink meanwhile cannot
// lead the write, or the temporary file, anywhere else. A symlink at the
// path is replaced where it leads: the walk followed it. It returns
// whether the file was created and its previous size.
func writeFile(s *spot, data []byte) (created bool, prevSize int64, err error) {
	mode := fs.FileMode(0o644)
	switch info := s.info; {
	case s.base == "" || info != nil && info.IsDir():
		return false, 0, fmt.Errorf("path %q is a directory", s.rel)
	case info == nil:
		created = true
	case !info.Mode().IsRegular():
		return false, 0, notRegularError{s.rel, info.Mode()}
	default:
		mode, prevSize = info.Mode().Perm(), info.Size()
	}
	base := s.base
	if len(base) > 200 {
		base = base[:200] // the temporary name must fit NAME_MAX too
	}
	tmp := "." + base + ".tmp-" + rand.Text()[:12]
	f, err := s.dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return false, 0, pathError(s.rel, err)
	}
	err = write(f, data)
	if err == nil && !created {
		err = f.Chmod(mode) // OpenFile's mode is less the umask; keep the file's own
	}
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = s.dir.Rename(tmp, s.base)
	}
	if err != nil {
		_ = s.dir.Remove(tmp)
		return false, 0, pathError(s.rel, err)
	}
	return created, prevSize, nil
}

func write(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}
