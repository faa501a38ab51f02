package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxLinkHops is how many symbolic links wayOf follows on one way before
// it gives up, as Linux does.
const maxLinkHops = 40

// maxWay is how many entries (links and directories) a way may pass
// before wayOf gives up: each is pinned before every command, so a .git
// link into a deep chain of directories would slow every command's
// start; it is refused instead (GitPaths.TooLong).
const maxWay = 64

// linkWay is where a symbolic link leads, followed one entry at a time
// as the kernel follows it.
type linkWay struct {
	// end is where the link leads, resolved; "" when it leads nowhere.
	end string
	// inside is the link itself and every link and directory strictly
	// inside the workspace met on the way, but end, in the order met.
	inside []string
	// outside is every link and directory outside the workspace met on
	// the way (the workspace and those that hold it left out), but end.
	outside []string
	// missing is the first entry that does not exist, when the way ends
	// there.
	missing string
	// err says why the link leads nowhere.
	err error
	// entries counts the entries met on the way.
	entries int
}

// wayOf follows the symbolic link link, an entry of the workspace ws (a
// resolved absolute path), entry by entry. A command that can rename or
// replace any entry of the way can make the link lead elsewhere; what it
// records is what must be kept from it.
func wayOf(ws, link string) linkWay {
	target, err := os.Readlink(link)
	if err != nil {
		return linkWay{err: err}
	}
	var w linkWay
	w.met(ws, link)
	return w.follow(ws, filepath.Dir(link), target, 1)
}

// wayTo is the way to the path p, absolute or relative to the workspace
// ws, entry by entry, as wayOf's.
func wayTo(ws, p string) linkWay {
	var w linkWay
	return w.follow(ws, ws, p, 0)
}

// met records the entry p of the way, unless it is ws or holds it.
func (w *linkWay) met(ws, p string) {
	w.entries++
	switch {
	case p != ws && within(p, ws):
		w.inside = addNew(w.inside, p)
	case !within(ws, p):
		w.outside = addNew(w.outside, p)
	}
}

// follow follows target from the directory cur (resolved), hops links
// followed already.
func (w linkWay) follow(ws, cur, target string, hops int) linkWay {
	met := func(p string) { w.met(ws, p) }
	todo := strings.Split(target, "/")
	if filepath.IsAbs(target) {
		cur = "/"
	}
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if w.entries >= maxWay {
			w.err = fmt.Errorf("%w: past %s", errWayTooLong, next)
			return w.done()
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				w.missing = next
			}
			w.err = err
			return w.done()
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if hops++; hops > maxLinkHops {
				w.err = fmt.Errorf("more than %d symbolic links on the way", maxLinkHops)
				return w.done()
			}
			t, err := os.Readlink(next)
			if err != nil {
				w.err = err
				return w.done()
			}
			met(next)
			if filepath.IsAbs(t) {
				cur = "/"
			}
			todo = append(strings.Split(t, "/"), todo...)
		case fi.IsDir():
			met(next)
			cur = next
		default:
			for _, rest := range todo {
				if rest != "" {
					w.err = &fs.PathError{Op: "lookup", Path: next, Err: syscall.ENOTDIR}
					return w.done()
				}
			}
			w.end = next
			return w.done()
		}
	}
	w.end = cur
	return w.done()
}

// done leaves end out of inside and outside: what is done to it is the
// caller's to say.
func (w linkWay) done() linkWay {
	if w.end != "" {
		w.inside = slices.DeleteFunc(w.inside, func(p string) bool { return p == w.end })
		w.outside = slices.DeleteFunc(w.outside, func(p string) bool { return p == w.end })
	}
	return w
}

// gitLinkOf is GitPathsOf of the workspace ws whose .git, dotgit, is a
// symbolic link. Git follows such a link (to a directory: the git
// directory; to a file: read as a .git file), and anyone who can write
// the workspace can make one, so a link never makes anything writable:
//
//   - the link and every link and directory inside the workspace on its
//     way are pinned (GitPaths.Via): a command cannot make it lead
//     elsewhere;
//   - a git directory (one with HEAD) inside the workspace is taken for
//     the workspace's .git directory: pinned, its hooks, config and info
//     (and its submodules') read-only, and so are its commondir and
//     config.worktree; the common directory its commondir names is kept
//     too (see commonOf);
//   - any other directory inside the workspace is read-only whole, and
//     refused: a command cannot make it a git directory of its own;
//   - a regular file is read-only, and read as a .git file is (what it
//     names is never a writable root: its back-link cannot be this
//     workspace's .git);
//   - a directory outside the workspace is refused, and a command may not
//     start while it lies in a writable root, or a writable root lies in
//     one of its control entries (GitPaths.Ends);
//   - so are links and directories outside the workspace on its way, and
//     the first missing entry of a link that leads nowhere, while they lie
//     in a writable root (GitPaths.Beyond): a command could make the link
//     lead to a git directory of its own.
func gitLinkOf(ws, dotgit string) GitPaths {
	w := wayOf(ws, dotgit)
	g := GitPaths{Via: w.inside, Beyond: w.outside}
	g.tooLong(dotgit, w)
	refuse := func(format string, args ...any) GitPaths {
		g.Refused = fmt.Sprintf("%v %s leads to: %s", errGitdir, dotgit, fmt.Sprintf(format, args...))
		return g
	}
	if w.err != nil {
		if w.missing != "" {
			g.Beyond = addNew(g.Beyond, w.missing)
		}
		return refuse("nowhere (%v)", w.err)
	}
	inside := w.end != ws && within(w.end, ws)
	fi, err := os.Lstat(w.end)
	switch {
	case err != nil:
		return refuse("%v", err)
	case fi.Mode().IsRegular():
		f := gitFileOf(ws, w.end)
		f.Via, f.Beyond, f.Writable = addNew(g.Via, f.Via...), addNew(g.Beyond, f.Beyond...), nil
		if f.TooLong == "" {
			f.TooLong = g.TooLong
		}
		if !inside {
			f.Beyond = addNew(f.Beyond, w.end)
		}
		if f.Refused == "" {
			f.Refused = fmt.Sprintf("%v named by %s, a link to %s: a link never makes a git directory writable", errGitdir, dotgit, w.end)
		}
		return f
	case !fi.IsDir():
		if !inside {
			g.Beyond = addNew(g.Beyond, w.end)
		}
		return refuse("%s, which is neither a directory nor a regular file", w.end)
	case inside && isGitDir(w.end):
		g.Pin = w.end
		g.keep(w.end)
		g.commonOf(ws, w.end)
		return g
	case inside:
		g.ReadOnly = []string{w.end}
		return refuse("%s, which is not a git directory (no HEAD): read-only", w.end)
	}
	g.Ends = []string{w.end}
	g.commonOf(ws, w.end)
	return refuse("%s, outside the workspace", w.end)
}

// commonOf reads the commondir file of d, a directory git takes for the
// workspace's git directory, as git does (relative to d, through
// symbolic links): git takes the config, the hooks and info from the
// common directory it names. A common directory inside the workspace is
// kept as .git is; one outside, unless it is a writable root already
// (a verified worktree's repository), must hold no writable root where
// git looks (GitPaths.Ends). The way to it is kept as a .git file's is.
// Git reads one commondir, not the common directory's own.
func (g *GitPaths) commonOf(ws, d string) {
	file := filepath.Join(d, "commondir")
	if _, err := os.Lstat(file); err != nil {
		return
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return // a dangling link: git reads none; the link is kept as a control entry
	}
	data, err := readSmall(real)
	if err != nil {
		return
	}
	c := strings.TrimSpace(string(data))
	if c == "" {
		return
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(d, c)
	}
	way := wayTo(ws, c)
	g.keepWay(way, g.Writable)
	g.tooLong(file, way)
	if way.err != nil {
		// Git takes no repository whose common directory is missing
		// ("not a git repository"). A command that makes it is the
		// case of a command that writes a commondir into .git, which the
		// action boundary removes once the command has ended (a command
		// start refused here would refuse harness's own look at the
		// effect, too).
		return
	}
	switch end := way.end; {
	case end == d || slices.Contains(g.Writable, end):
	case end != ws && within(end, ws):
		g.keep(end)
	default:
		g.Ends = addNew(g.Ends, end)
	}
}

// tooLong records the way w, from the path from, in TooLong when it was
// cut at maxWay entries.
func (g *GitPaths) tooLong(from string, w linkWay) {
	if errors.Is(w.err, errWayTooLong) && g.TooLong == "" {
		g.TooLong = fmt.Sprintf("the way from %s: %v", from, w.err)
	}
}

// controlLinks keeps what the control entries in ReadOnly that are
// symbolic links lead to (a person's shared hooks directory, a dotfiles
// manager's config): the read-only bind follows a link, so the link
// itself is pinned (a command cannot remove it and make a hooks
// directory of its own), its way is kept as a .git link's is, and a
// link that leads nowhere must not lie in a writable root (a command
// could make what it names), nor one that leads outside the workspace
// (GitPaths.Ends). ws is the workspace.
func (g *GitPaths) controlLinks(ws string) {
	for _, p := range slices.Clone(g.ReadOnly) {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		g.Via = addNew(g.Via, p)
		w := wayOf(ws, p)
		g.keepWay(w, g.Writable)
		g.tooLong(p, w)
		switch {
		case w.err != nil && w.missing != "":
			g.Beyond = addNew(g.Beyond, w.missing)
		case w.err == nil && !within(w.end, ws) && !strictlyInAny(w.end, g.Writable):
			// Outside: the read-only bind keeps it from this command, not
			// from what else may write there.
			g.Ends = addNew(g.Ends, w.end)
		}
	}
}

// keepWay pins the entries of the way w inside the workspace and those
// strictly inside one of roots (the git directories made writable);
// the others outside must not lie in a writable root (Beyond).
func (g *GitPaths) keepWay(w linkWay, roots []string) {
	g.Via = addNew(g.Via, w.inside...)
	for _, p := range w.outside {
		if strictlyInAny(p, roots) {
			g.Via = addNew(g.Via, p)
		} else {
			g.Beyond = addNew(g.Beyond, p)
		}
	}
}

// keep keeps the git directory d, inside the workspace, as .git is:
// pinned, its control paths (and its submodules') read-only, and the
// files that say where its config is (commondir, config.worktree, gitdir)
// read-only where they exist.
func (g *GitPaths) keep(d string) {
	g.Kept = addNew(g.Kept, d)
	g.ReadOnly = addNew(g.ReadOnly, controlOf(d)...)
	g.ReadOnly = addNew(g.ReadOnly, filepath.Join(d, "commondir"), filepath.Join(d, "config.worktree"), filepath.Join(d, "gitdir"))
	g.inside(d, true)
}

// strictlyInAny reports whether p lies strictly inside one of dirs.
func strictlyInAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p != d && within(p, d) {
			return true
		}
	}
	return false
}

// storeLinkOf is the way of the workspace's .harness when it is a
// symbolic link, and true; false when it is not one.
func storeLinkOf(ws string) (linkWay, bool) {
	dot := filepath.Join(ws, StoreName)
	fi, err := os.Lstat(dot)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return linkWay{}, false
	}
	return wayOf(ws, dot), true
}

// checkWays refuses a spec whose writable roots (g its git paths) would
// let a command change where the workspace's .git or .harness leads (an
// entry of its way lies strictly inside a root: the root itself a
// command cannot rename), or write what git reads in the git directory a
// .git leads to outside the workspace (see gitLinkOf, gitFileOf).
func (s Spec) checkWays(g GitPaths) error {
	if s.Mode == Off {
		return nil
	}
	if g.TooLong != "" {
		return fmt.Errorf("%w: %s: a command could change an entry past those pinned; shorten it", ErrInvalidSpec, g.TooLong)
	}
	roots := s.writableRootsOf(g)
	for _, r := range roots {
		for _, p := range g.Beyond {
			if p != r && within(p, r) {
				return s.beyondError(g, p, r)
			}
		}
		for _, p := range g.Ends {
			if within(p, r) || holdsControl(p, r) {
				return fmt.Errorf("%w: the workspace's .git leads to %s (a git directory, its common directory, where a link among its hooks, config and info leads, or a hooks directory or included config a git config names), outside the workspace or holding it, that lies in, or whose control entries hold, the writable %s: a command could write hooks or a config the person's git would run; remove or fix the .git or the config", ErrInvalidSpec, p, r)
			}
		}
	}
	if caches := workspaceCaches(); caches != "" {
		for _, p := range append(slices.Clone(g.Ends), g.Beyond...) {
			if within(p, caches) {
				return fmt.Errorf("%w: the workspace's .git (or %s, or a link among its hooks, config and info) leads through or to %s, in the caches of harness's workspaces, which other workspaces' commands write: remove or fix the link", ErrInvalidSpec, StoreName, p)
			}
		}
	}
	return nil
}

// beyondError is the refusal of a way (see checkWays) that passes p, in
// the writable root r: it names the symbolic link whose way it is, when
// one of those pinned is, relative to the workspace, and says what to do.
func (s Spec) beyondError(g GitPaths, p, r string) error {
	ws := s.Workspace
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	for _, l := range addNew(slices.Clone(g.Via), filepath.Join(ws, ".git"), filepath.Join(ws, StoreName)) {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		w := wayOf(ws, l)
		if w.missing != p && !slices.Contains(w.outside, p) {
			continue
		}
		name := l
		if rel, err := filepath.Rel(ws, l); err == nil && within(l, ws) {
			name = rel
		}
		if w.missing == p {
			return fmt.Errorf("%w: the way of the symbolic link %s passes %s, which does not exist, in the writable %s: a command could make it, and git would take it for its own; remove the link or create %s", ErrInvalidSpec, name, p, r, p)
		}
		return fmt.Errorf("%w: the way of the symbolic link %s passes %s, in the writable %s: a command could make it lead elsewhere; remove the link, or make it lead out of the command's reach", ErrInvalidSpec, name, p, r)
	}
	return fmt.Errorf("%w: the way of the workspace's .git (a symbolic link, or to the git directory or common directory it names), of a link among its hooks, config and info, or of a %s link, passes %s, in the writable %s: a command could make it lead elsewhere; remove the link, or make it lead out of the command's reach", ErrInvalidSpec, StoreName, p, r)
}

// workspaceCaches is the directory that holds every workspace's Go cache
// (see WorkspaceGoCache), resolved; "" when there is no cache directory.
func workspaceCaches() string {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return ""
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return cachesIn(dir)
}

// holdsControl reports whether the writable root r lies in an entry of
// the directory d that git, taking d for a git directory, reads to
// decide what it runs (or whether d is one at all).
func holdsControl(d, r string) bool {
	for _, c := range []string{"hooks", "config", "info", "commondir", "config.worktree", "modules", "worktrees", "HEAD", "objects", "refs"} {
		if within(r, filepath.Join(d, c)) {
			return true
		}
	}
	return false
}

// pinsOf is what a command's helper bind-mounts onto itself before
// anything else (g.Via and g.Pin), shallowest first: a mount made later
// on a directory above one made before would hide it.
func pinsOf(g GitPaths) []string {
	pins := slices.Clone(g.Via)
	if g.Pin != "" {
		pins = addNew(pins, g.Pin)
	}
	pins = addNew(pins, g.Kept...)
	slices.SortStableFunc(pins, func(a, b string) int {
		return strings.Count(a, "/") - strings.Count(b, "/")
	})
	return pins
}
