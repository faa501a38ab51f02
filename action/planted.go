package action

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// A git directory that has no "commondir" takes one as soon as it exists:
// git then reads the config, the hooks and info/ from the directory it
// names (setup.c, get_common_dir_noenv). The command sandbox keeps a git
// directory's config, hooks and info read-only, but Landlock grants
// rights per directory, and the git directory itself must stay writable
// (git's lock files and renames), so a command can make a commondir
// there, naming a directory of its own whose config sets core.fsmonitor:
// the person's next git status would run it. The file cannot be made
// ahead and covered, as config.worktree is, for git takes an empty
// commondir for an error and a "." would change what git does.
//
// So the Boundary notes, before an action runs, which git directories
// have no commondir (commonWatch), and once its adapter has ended —
// every process of a sandboxed command has ended then: the sandbox's
// helper is the first process of the command's PID namespace, and the
// kernel ends every other before it is reaped — takes away a commondir
// that appeared in one of them, whatever it is (a file, a link, a
// directory), before it observes after. The completion records it
// (Observation.Removed): the action made it, the runtime removed it.
// A git directory that had a commondir when the action started (a
// linked worktree's, which the sandbox makes read-only) is left alone.
//
// The git directories watched are the workspace's .git; what a .git file
// at the top leads to (a linked worktree's or a submodule's git
// directory, outside the workspace) and the common directory its
// commondir names; and, from the observer's reading before the action,
// every nested repository's .git and every submodule's git directory
// under a .git's modules/ (each found by its observed HEAD or config),
// the first maxWatchedGitDirs of them.
//
// What else in a writable git directory git reads needs no such care:
// objects/info/alternates and shallow name object stores and commits,
// never a program or a config (an alternate store's own config and hooks
// are not read); config, hooks/, info/ (attributes, which pick filters,
// exclude, sparse-checkout, grafts) and config.worktree are read-only
// for a command; worktrees/ is sealed; the index names no program (its
// fsmonitor extension keeps a token, not a command). A rebase's todo list
// (exec lines), the sequencer's options (a merge strategy) and a legacy
// remotes/ or branches/ file (a URL, which a remote helper on PATH may
// serve) act only in the person's own git rebase --continue, cherry-pick
// --continue or fetch, never in git status, and each is observed as the
// action's effect (see guard.go).

// maxWatchedGitDirs bounds how many git directories an action's
// commonWatch looks at, so that a tree of nested repositories cannot slow
// every action. The sandbox keeps no more nested repositories than 64
// (what it does not keep, a command may write whole, and the observer
// records).
const maxWatchedGitDirs = 4096

// maxCommondirRead is how much of a planted commondir file is read to
// say what it named.
const maxCommondirRead = 4 << 10

// watchedDir is a git directory a commonWatch looks at: root is the
// directory an os.Root is opened on (the workspace, or the git directory
// itself when it lies outside), rel the git directory in it.
type watchedDir struct {
	root, rel string
	// shown is the commondir's path in the record: relative to the
	// workspace, or absolute outside it.
	shown string
}

// commonWatch is the git directories that had no commondir when an
// action started.
type commonWatch struct {
	dirs []watchedDir
}

// watchCommondirs returns the watch of the workspace at ws: those of
// its git directories (gitDirsOf) that have no commondir now.
func watchCommondirs(ws string, named func([]string) ([]string, uint64, bool)) *commonWatch {
	w := &commonWatch{}
	for _, d := range gitDirsOf(ws, named) {
		if _, err := os.Lstat(filepath.Join(d.root, filepath.FromSlash(d.rel), "commondir")); errors.Is(err, fs.ErrNotExist) {
			w.dirs = append(w.dirs, d)
		}
	}
	return w
}

// gitDirsOf is the git directories of the workspace at ws that a
// commonWatch looks at (see there), each a directory now, the first
// maxWatchedGitDirs; named, when not nil, is the Observer's Named,
// whose last reading gives the nested and the submodules' ones.
func gitDirsOf(ws string, named func([]string) ([]string, uint64, bool)) []watchedDir {
	if ws == "" {
		return nil
	}
	var out []watchedDir
	seen := map[string]bool{}
	add := func(d watchedDir) {
		key := filepath.Join(d.root, filepath.FromSlash(d.rel))
		if seen[key] || len(out) >= maxWatchedGitDirs {
			return
		}
		seen[key] = true
		if fi, err := os.Lstat(key); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	// A git directory found by its resolved path: relative to the
	// workspace (resolved once) when it lies inside, else on its own.
	real := ws
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		real = r
	}
	addResolved := func(d string) {
		if rel, err := filepath.Rel(real, d); err == nil && filepath.IsLocal(rel) {
			add(watchedDir{root: ws, rel: filepath.ToSlash(rel), shown: path.Join(filepath.ToSlash(rel), "commondir")})
		} else {
			add(watchedDir{root: d, rel: ".", shown: filepath.Join(d, "commondir")})
		}
	}
	dotgit := filepath.Join(ws, ".git")
	if fi, err := os.Lstat(dotgit); err == nil && fi.IsDir() {
		add(watchedDir{root: ws, rel: ".git", shown: ".git/commondir"})
	} else if err == nil {
		// A .git file, or a link git follows: to a git directory, or to
		// a .git file read as one at dotgit.
		if target, err := filepath.EvalSymlinks(dotgit); err == nil {
			if fi, err := os.Stat(target); err == nil && fi.IsDir() {
				addResolved(target)
			} else if err == nil && fi.Mode().IsRegular() {
				for _, d := range linkedGitDirs(ws, target) {
					addResolved(d)
				}
			}
		}
	}
	if named != nil {
		paths, _, _ := named([]string{"HEAD", "config"})
		for _, p := range paths {
			if d := path.Dir(p); isGitDir(d) {
				add(watchedDir{root: ws, rel: d, shown: d + "/commondir"})
			}
		}
	}
	return out
}

// isGitDir reports whether d, a slash-separated path relative to the
// workspace, is where git finds a repository's git directory: a ".git"
// directory, or a submodule's git directory under a .git's modules/.
func isGitDir(d string) bool {
	if path.Base(d) == ".git" {
		return true
	}
	g, sub, _ := guardOf(d + "/x")
	if g != guardGit {
		return false
	}
	sub = strings.TrimSuffix(sub, "/x")
	// modules/<name>, where a name may hold "/": a directory under modules/
	// that is not inside another git directory's working data.
	return strings.HasPrefix(sub, "modules/") && !hasPart(strings.TrimPrefix(sub, "modules/"), func(p string) bool { return gitDataDirs[p] || p == "hooks" || p == "info" || p == "worktrees" })
}

// linkedGitDirs is the git directory a .git file at dotgit leads to (a
// linked worktree's, a submodule's) and the common directory that one's
// commondir names, each as it resolves; none when the file says nothing
// git would follow.
func linkedGitDirs(ws, dotgit string) []string {
	target := firstLine(dotgit)
	target, ok := strings.CutPrefix(target, "gitdir:")
	if !ok {
		return nil
	}
	target = strings.TrimSpace(target)
	if target == "" {
		return nil
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(ws, target)
	}
	gitdir, err := filepath.EvalSymlinks(target)
	if err != nil {
		return nil
	}
	out := []string{gitdir}
	if c := firstLine(filepath.Join(gitdir, "commondir")); c != "" {
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		if common, err := filepath.EvalSymlinks(c); err == nil {
			out = append(out, common)
		}
	}
	return out
}

// firstLine is the first line of the regular file p, of at most
// maxCommondirRead bytes read, trimmed; "" when it cannot be read.
func firstLine(p string) string {
	f, err := os.OpenFile(p, regularFlags, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxCommondirRead))
	line, _, _ := bytes.Cut(data, []byte("\n"))
	return strings.TrimSpace(string(line))
}

// remove takes away each commondir that appeared in a watched git
// directory, and says what it was. An entry is looked at and removed
// through an os.Root of its directory's root, so nothing on the way can
// lead it elsewhere; what it is — a file, a link, a directory, anything
// else — is removed as it is, never followed.
func (w *commonWatch) remove() []facts.Removal {
	if w == nil {
		return nil
	}
	var out []facts.Removal
	for _, d := range w.dirs {
		// The common case, nothing there, costs one lstat; what is
		// there is looked at again through an os.Root.
		if _, err := os.Lstat(filepath.Join(d.root, filepath.FromSlash(d.rel), "commondir")); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if rm, ok := removeCommondir(d); ok {
			out = append(out, rm)
		}
	}
	return out
}

// removeCommondir removes the commondir of d, when there is one now.
func removeCommondir(d watchedDir) (facts.Removal, bool) {
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return facts.Removal{}, false
	}
	defer r.Close()
	name := path.Join(d.rel, "commondir")
	fi, err := r.Lstat(name)
	if err != nil {
		return facts.Removal{}, false
	}
	rm := facts.Removal{Path: d.shown, Kind: FileKind(fi.Mode()),
		Why: "a commondir appeared in this git directory while the action ran, and it had none when the action started: git would read the config, hooks and info of the directory it names, which could make a person's next git command run a program of its writer's choosing (core.fsmonitor)"}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if target, err := r.Readlink(name); err == nil {
			sum := sha256.Sum256([]byte(target))
			rm.Names, rm.Digest = target, hex.EncodeToString(sum[:])
		}
	case fi.Mode().IsRegular():
		if f, err := r.OpenFile(name, regularFlags, 0); err == nil {
			if now, err := f.Stat(); err == nil && os.SameFile(now, fi) {
				data, err := io.ReadAll(io.LimitReader(f, maxCommondirRead+1))
				if err == nil && len(data) <= maxCommondirRead {
					sum := sha256.Sum256(data)
					rm.Digest = hex.EncodeToString(sum[:])
				}
				line, _, _ := bytes.Cut(data[:min(len(data), maxCommondirRead)], []byte("\n"))
				rm.Names = strings.TrimSpace(string(line))
			}
			f.Close()
		}
	}
	if fi.IsDir() {
		err = r.RemoveAll(name)
	} else {
		err = r.Remove(name)
	}
	if err != nil {
		rm.Error = fmt.Sprintf("it could not be removed, and is still there: %v", err)
	}
	return rm, true
}
