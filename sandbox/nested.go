package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
)

// Reader is what reads the whole workspace anyway — the runtime's
// observer (action.Workspace), before and after every action — and can
// say from its last reading where the entries of given names are, so
// that a command's start need not walk the workspace to find the nested
// stores (Spec.HiddenNames).
type Reader interface {
	// Named returns the paths (slash-separated, relative to the
	// workspace) of the entries named one of names in the last reading,
	// that reading's number, and false when there is no reading that can
	// say.
	Named(names []string) (paths []string, reading uint64, ok bool)
	// Readings is how many readings were started so far: a reading
	// numbered above it was started after the call.
	Readings() uint64
}

// Nested finds the nested stores (the entries Spec.HiddenNames names)
// and the nested repositories (.git) of a workspace for its commands
// from a Reader's last reading instead of a walk of the workspace at
// every command's start: the walk is what made a command's start grow
// with the workspace. It is shared by every copy of
// the Spec that holds it (Spec.Clone keeps the pointer), and safe for
// concurrent use.
//
// The check is as strict as the walk's: a reading is used only when it
// was started after every earlier command of the Nested had ended, and no
// command of the Nested is running — so a .harness that a command made,
// whatever it holds (an empty directory, only a db/), is in the reading
// the next command uses (the runtime reads the workspace after each
// action and again before the next). Otherwise — no Reader, no reading
// since the last command, a command still running, a reading that cannot
// say — the workspace is walked (walkNamed), as without a Nested.
type Nested struct {
	mu      sync.Mutex // guards what follows
	reader  Reader
	running int    // commands started and not yet ended
	after   uint64 // a reading must be numbered above it to be used
}

// From makes r the reader the nested stores are taken from (nil: none,
// walk at every start).
func (n *Nested) From(r Reader) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reader = r
	n.after = 0
	if r != nil {
		n.after = r.Readings()
	}
}

// begin is called when a command starts: the nested entries of ws named
// one of names from a reading that may be used (relative paths), and
// true; or false, and the workspace is walked. Every begin is followed by one
// end, when the command has ended (or did not start).
func (n *Nested) begin(names []string) ([]string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	busy := n.running > 0
	n.running++
	if n.reader == nil || busy {
		return nil, false
	}
	paths, reading, ok := n.reader.Named(names)
	if !ok || reading <= n.after {
		return nil, false
	}
	return paths, true
}

// end is called when a command begun has ended: only a reading started
// after now may be used by the next.
func (n *Nested) end() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.running--
	if n.reader != nil {
		n.after = max(n.after, n.reader.Readings())
	}
}

// last is what the Reader's last reading, whichever it is, says of the
// entries named one of names (relative paths); false when there is no
// Reader or no reading that can say. Spec.Prepare makes what a command's
// start would make from it; no command's start takes it.
func (n *Nested) last(names []string) ([]string, bool) {
	n.mu.Lock()
	r := n.reader
	n.mu.Unlock()
	if r == nil {
		return nil, false
	}
	paths, _, ok := r.Named(names)
	return paths, ok
}

// nestedTargets is what hides the entries rels (relative to ws, as a
// Reader gives them): each as it resolves when it is a symlink, unless
// that holds one of keep (the workspace, a writable root), as the walk
// decides; an entry gone meanwhile is left out, and so is one that lies
// within another.
func nestedTargets(ws string, rels []string, keep []string) []string {
	var out []string
	for _, rel := range rels {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || slices.ContainsFunc(keep, func(k string) bool { return within(k, real) }) {
				continue
			}
			p = real
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	// The outermost only: what lies beneath a covered entry is out of
	// sight already.
	var outer []string
	for _, p := range out {
		if !slices.ContainsFunc(out, func(q string) bool { return q != p && within(p, q) }) {
			outer = append(outer, p)
		}
	}
	return outer
}

// nestedGitShown is how many nested git directories a refusal names
// when there are more than helper.MaxNestedGit.
const nestedGitShown = 5

// nestedGits is what the nested .git entries rels (relative to ws, from
// the observer's reading or walkNamed; ws's own .git left out) ask of a
// command whose workspace's git paths are g and whose writable roots are
// roots: the git directories to keep from it as ws's own .git is (dirs),
// the entries of the ways to them to pin (via), and an error wrapping
// ErrInvalidSpec when it may not start.
//
// A .git directory that holds a HEAD is kept (one without is no
// repository to git: nothing is made in it, and it counts for nothing).
// A .git file, or a .git symbolic link, leads git to a git directory as
// the workspace's own does (see gitFileOf, gitLinkOf), and anyone who
// writes the workspace can make one: it is followed entry by entry as
// git follows it, and a git directory it leads to inside the workspace,
// with a HEAD, is kept as a .git directory is (but one g keeps already:
// the workspace's own, a submodule's under .git/modules), and so is one
// strictly inside a git directory g makes writable (a linked worktree's
// submodule), the way there pinned. One that leads elsewhere outside the
// workspace must not lie in, or hold in its control entries, a writable
// root, nor lie in the caches of harness's workspaces; nor may an entry
// of its way outside the workspace, or the first missing one, lie in a
// writable root: a command could write a hooks directory or a config
// there, unobserved, that the person's git in that repository (or a git
// status of the workspace, which recurses into a submodule) would run.
// What cannot be read as a .git file, or leads nowhere, is no repository
// git would take, and asks nothing more (a command that makes one in the
// workspace is observed).
//
// With keep (workspace-write), more git directories to keep than
// helper.MaxNestedGit refuse the command too: which to keep cannot be
// left to the order of names a command chooses (a command can make
// decoys sort first). Without keep, only the refusals of ways are made.
func nestedGits(ws string, rels []string, g GitPaths, roots []string, keep bool) (dirs, via []string, err error) {
	kept := addNew(addNew(addNew(nil, g.Pin), g.Kept...), g.modules...)
	n := nestedWays{ws: ws, roots: roots, own: g.Writable}
	for _, rel := range rels {
		if rel == ".git" || !filepath.IsLocal(filepath.FromSlash(rel)) {
			continue
		}
		n.rel = rel
		d, err := n.dir(filepath.Join(ws, filepath.FromSlash(rel)))
		if err != nil {
			return nil, nil, err
		}
		if d == "" || slices.Contains(kept, d) || slices.Contains(dirs, d) {
			continue
		}
		dirs = append(dirs, d)
	}
	if !keep {
		return nil, nil, nil
	}
	if len(dirs) > helper.MaxNestedGit {
		shown := make([]string, 0, nestedGitShown)
		for _, d := range dirs[:nestedGitShown] {
			if rel, err := filepath.Rel(ws, d); err == nil && within(d, ws) {
				d = rel
			}
			shown = append(shown, d)
		}
		return nil, nil, fmt.Errorf("%w: %d nested git directories in the workspace (%s, …), more than the %d a command's start keeps from it (pinned, their hooks, config and info read-only); which ones cannot be left to what a command may have made (decoys sort first as easily as anything): remove those not needed (a command may have made them: harness effects lists what it wrote there), or run harness in a directory that holds fewer repositories", ErrInvalidSpec, len(dirs), strings.Join(shown, ", "), helper.MaxNestedGit)
	}
	return dirs, n.via, nil
}

// nestedWays follows the nested .git entries for nestedGits.
type nestedWays struct {
	ws    string
	roots []string // the command's writable roots
	own   []string // the git directories made writable for the workspace (GitPaths.Writable)
	rel   string   // the entry followed, relative to ws
	via   []string // entries strictly inside own met on the ways, to pin
}

// dir is the git directory the nested .git entry p makes git take, to
// keep: p itself when it is a directory, where it leads when it is a
// .git file or link; "" when there is none to keep.
func (n *nestedWays) dir(p string) (string, error) {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return "", nil // gone meanwhile: nothing to keep
	case fi.IsDir():
		return gitDirOrNone(p), nil
	case fi.Mode().IsRegular():
		return n.file(p, filepath.Dir(p))
	case fi.Mode()&fs.ModeSymlink == 0:
		return "", nil
	}
	way := wayOf(n.ws, p)
	if err := n.check(way); err != nil {
		return "", err
	}
	if way.err != nil {
		return "", nil
	}
	if efi, err := os.Lstat(way.end); err == nil && efi.Mode().IsRegular() {
		// A link to a file: read as a .git file, its relative gitdir
		// taken against the link's directory, as git does.
		return n.file(way.end, filepath.Dir(p))
	}
	return n.end(way), nil
}

// file is dir of the .git file file, whose relative gitdir git takes
// against base.
func (n *nestedWays) file(file, base string) (string, error) {
	gitdir, ok := gitfileDir(file, base)
	if !ok {
		return "", nil // git takes no repository there
	}
	way := wayTo(n.ws, gitdir)
	if err := n.check(way); err != nil {
		return "", err
	}
	return n.end(way), nil
}

// gitfileDir is the git directory the .git file file names, read as git
// reads it (read_gitfile): the whole file, of at most maxGitFile bytes
// (git refuses a larger one), begins with "gitdir: ", and what follows,
// but the line ends (CR, LF) at its end and up to a NUL, is the path,
// newlines and spaces within it included; a relative one is taken
// against base. The path is not cleaned: "a/../b" is left for wayTo to
// follow as the kernel does, a/ first (a link there leads elsewhere).
// False when git takes no git directory from the file.
func gitfileDir(file, base string) (string, bool) {
	data, err := readSmall(file)
	if err != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(string(data), "gitdir: ")
	if !ok {
		return "", false
	}
	// The line ends at the end go first; then git reads the path as a C
	// string, up to a NUL.
	rest = strings.TrimRight(rest, "\r\n")
	rest, _, _ = strings.Cut(rest, "\x00")
	if rest == "" {
		return "", false
	}
	if !strings.HasPrefix(rest, "/") {
		rest = base + "/" + rest
	}
	return rest, true
}

// end is where the way leads when that is a directory to keep: strictly
// inside the workspace, or strictly inside a git directory made
// writable for it; "" otherwise.
func (n *nestedWays) end(way linkWay) string {
	if way.err != nil || !(way.end != n.ws && within(way.end, n.ws) || strictlyInAny(way.end, n.own)) {
		return ""
	}
	if fi, err := os.Lstat(way.end); err != nil || !fi.IsDir() {
		return ""
	}
	return gitDirOrNone(way.end)
}

// gitDirOrNone is d when git could take it for a git directory (it holds
// a HEAD, of any type: git also reads a link there); "" otherwise. A
// directory without one is none to git, which goes on to the enclosing
// repository; a command that makes it one later writes its HEAD, and
// whatever else it puts there, in the workspace, where it is observed.
func gitDirOrNone(d string) string {
	if _, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil {
		return ""
	}
	return d
}

// check refuses the way when an entry of it outside the workspace, or
// its first missing entry there, lies in a writable root (but strictly
// inside a git directory made writable for the workspace: pinned, in
// via), or when where it ends outside the workspace lies in or holds in
// its control entries a writable root, or lies in the caches of
// harness's workspaces.
func (n *nestedWays) check(way linkWay) error {
	refuse := func(what, p, r string) error {
		return fmt.Errorf("%w: the nested %s (a .git file or symbolic link) leads git %s %s, in the writable %s, outside the workspace: a command could write hooks or a config there, unobserved, that the person's git in that repository, or a git status of the workspace that recurses into it, would run; remove %s, or move its git directory into the workspace or out of a command's reach", ErrInvalidSpec, n.rel, what, p, r, n.rel)
	}
	if errors.Is(way.err, errWayTooLong) {
		return fmt.Errorf("%w: the way of the nested %s: %v: a command could change an entry past those followed; shorten it", ErrInvalidSpec, n.rel, way.err)
	}
	beyond := slices.Clone(way.outside)
	if way.missing != "" && !within(way.missing, n.ws) {
		beyond = append(beyond, way.missing)
	}
	e := way.end
	if way.err != nil || (e != n.ws && within(e, n.ws)) || strictlyInAny(e, n.own) {
		e = "" // leads nowhere, or where it is kept
	}
	for _, p := range beyond {
		if p != way.missing && strictlyInAny(p, n.own) {
			n.via = addNew(n.via, p)
			continue
		}
		for _, r := range n.roots {
			if p != r && within(p, r) {
				return refuse("through", p, r)
			}
		}
	}
	if e != "" {
		for _, r := range n.roots {
			if within(e, r) || holdsControl(e, r) {
				return refuse("to", e, r)
			}
		}
	}
	if caches := workspaceCaches(); caches != "" {
		const theCaches = " (the caches of harness's workspaces, which their commands write)"
		for _, p := range append(beyond, e) {
			if p != "" && within(p, caches) && !slices.Contains(n.via, p) {
				return refuse(map[bool]string{true: "to", false: "through"}[p == e], p, caches+theCaches)
			}
		}
	}
	return nil
}

// keepNested is what keeps the nested git directories dirs (see
// nestedGits) from a command, as the workspace's own is kept: each is
// pinned (pins), its missing control entries made now
// (helper.MakeGitControl; Spec.Prepare makes them before the runtime's
// reading, so that this finds them made), and each of helper.GitControl
// there read-only (ro). One no longer a directory is left out.
func keepNested(dirs []string) (pins, ro []string) {
	for _, d := range dirs {
		if !helper.MakeGitControl(d) {
			continue
		}
		pins = append(pins, d)
		for _, c := range helper.GitControl {
			ro = append(ro, filepath.Join(d, c))
		}
	}
	return pins, ro
}

// walkNamed is what a Reader's Named says, found by a walk of the
// workspace ws instead: the entries named one of names under it (not in
// a .git directory, nor under an entry found that is a directory),
// relative, slash-separated.
func walkNamed(ws string, names []string) []string {
	if len(names) == 0 {
		return nil
	}
	var out []string
	_ = filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && path != ws {
				return fs.SkipDir
			}
			return nil
		}
		if path == ws {
			return nil
		}
		name := d.Name()
		if slices.Contains(names, name) {
			rel, _ := filepath.Rel(ws, path)
			out = append(out, filepath.ToSlash(rel))
		} else if name != ".git" {
			return nil
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	return out
}
