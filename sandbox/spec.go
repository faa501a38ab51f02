package sandbox

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

// Mode is how much a command may change.
type Mode string

// The modes.
const (
	// WorkspaceWrite, the default: read the file system, write only the
	// workspace, the command's private temporary directory and the
	// workspace's Go build cache; never the store, .git/hooks, .git/config
	// or .git/info;
	// no network unless Spec.Network.
	WorkspaceWrite Mode = facts.SandboxWorkspaceWrite
	// ReadOnly: as WorkspaceWrite, but the workspace is not writable
	// either.
	ReadOnly Mode = facts.SandboxReadOnly
	// Off: no sandbox. The command runs with the user's authority; only
	// its environment is still the allow-list.
	Off Mode = facts.SandboxOff
)

// ParseMode returns the mode named s: "workspace-write", "read-only" or
// "off".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case WorkspaceWrite, ReadOnly, Off:
		return m, nil
	}
	return "", fmt.Errorf("%w: mode %q is not one of workspace-write, read-only, off", ErrInvalidSpec, s)
}

// Errors, tested with errors.Is.
var (
	// ErrInvalidSpec: a Spec that cannot be run as written (an unknown
	// mode, a relative path, a hidden path that holds the workspace).
	ErrInvalidSpec = errors.New("invalid sandbox spec")
	// ErrUnavailable: this system lacks what the mode needs (user
	// namespaces, Landlock), or is not Linux. The error says what is
	// missing; mode off is what runs without it.
	ErrUnavailable = errors.New("sandbox unavailable")
	// ErrSetup: the sandbox could not be set up for one command (a mount
	// or a Landlock rule failed); the command did not run.
	ErrSetup = errors.New("sandbox setup failed")
)

// errGitdir begins GitPaths.Refused: the git directory a .git file names
// is not made writable.
var errGitdir = errors.New("not writable: the git directory")

// errWayTooLong: the way of a .git or .harness link, or to a git
// directory, passes more than maxWay entries (see GitPaths.TooLong).
var errWayTooLong = errors.New("more than 64 links and directories on the way")

// StoreName is the name of a workspace's store directory. Every directory
// of this name under the workspace is hidden from commands (see
// Spec.HiddenNames).
const StoreName = ".harness"

// TempPattern is the name pattern of a command's private temporary
// directory, made in os.TempDir and removed when the command ends. (A
// harness that is killed cannot remove it: it is left, with whatever the
// command wrote there.)
const TempPattern = "harness-cmd-*"

// Spec is where a command may reach: a plain value, validated by
// [Spec.Validate], recorded by [Spec.Record], applied by [Cmd]. [Default]
// returns the spec of a workspace; change its fields to widen or narrow it.
type Spec struct {
	// Mode is WorkspaceWrite, ReadOnly or Off.
	Mode Mode
	// Network lets the command use the network. Without it the command
	// has a network namespace of its own with only a loopback interface
	// (a test's local server works; nothing outside is reachable).
	Network bool
	// NetworkAllow, without Network, is an allow-list of hosts (see
	// netproxy.ParseRule: "github.com", "*.example.com", "127.0.0.1:8080"):
	// the command still has no network of its own, but a proxy the
	// harness runs, outside the sandbox, on ProxyPort of its loopback,
	// and HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (and their lower-case
	// forms) name it. The proxy reaches only these hosts (see package
	// netproxy). Ignored with Network, and in mode Off.
	NetworkAllow []string
	// Workspace is the absolute directory the command runs in, writable in
	// WorkspaceWrite.
	Workspace string
	// Writable is more absolute directories the command may write.
	Writable []string
	// ReadOnly is absolute paths inside writable roots that the command
	// may read but not change (bind-mounted read-only). Git's are added
	// (see Git).
	ReadOnly []string
	// Git is the workspace's git paths as Default found them, before any
	// command ran: its hooks and config are read-only, its .git pinned, a
	// worktree's git directories writable. Only these may widen what a
	// command writes: a .git a command wrote later is trusted to narrow it
	// (its hooks and config read-only too) but never to add a root, or a
	// command could name any directory in a .git file and the next one
	// would write there.
	Git GitPaths
	// Hidden is absolute paths the command cannot see: each is covered by
	// an empty, read-only directory (a file by /dev/null). A path that does
	// not exist when the command starts is skipped. Hidden paths must not
	// hold the workspace or a writable root.
	Hidden []string
	// HiddenNames are names hidden wherever they occur under the
	// workspace when a command starts (StoreName: every nested store).
	// An entry that is a symlink hides where it leads, unless that holds
	// the workspace or a writable root.
	HiddenNames []string
	// Nested, when set, finds the nested stores (HiddenNames) from the
	// runtime's last reading of the workspace instead of a walk at each
	// command's start, when that reading is as fresh as the walk would be
	// (see Nested). Copies of the Spec share it.
	Nested *Nested
	// Env is more environment variable names a command gets, beside the
	// allow-list (see EnvAllowList); a name ending in "*" passes every
	// variable it is a prefix of.
	Env []string
	// GoCache is the directory a command gets as GOCACHE, a writable root:
	// the workspace's own build cache (WorkspaceGoCache), so that go test
	// works without making the user's cache, or another workspace's,
	// writable. "" leaves GOCACHE unset (and go cannot build, since the
	// user's cache is read-only). Mode off ignores it: such a command gets
	// the user's own GOCACHE, if any, never one a sandboxed command could
	// write.
	GoCache string
	// SimulateMissing makes the sandbox behave as if the system lacked
	// these features, for tests of the fallback (see also the environment
	// variable SimulateEnv). It can only make a mode unavailable, never
	// weaken it.
	SimulateMissing []Feature
}

// Feature is a kernel feature the sandbox needs.
type Feature string

// The features.
const (
	UserNamespaces Feature = "userns"
	Landlock       Feature = "landlock"
)

// SimulateEnv names an environment variable of the harness's process that
// simulates missing features, as Spec.SimulateMissing does: a
// comma-separated list of "landlock" and "userns". For the command-line
// tests of the fallback; it can only make the sandbox unavailable.
const SimulateEnv = "HARNESS_SANDBOX_SIMULATE_MISSING"

// EnvAllowList is the environment a command gets from the harness's: the
// names, and the prefixes ending in "*", that pass. Everything else — the
// providers' keys, tokens, *_BASE_URL, whatever the person's shell holds
// — does not. TMPDIR is not taken from the harness: a command gets its
// private temporary directory. Nor is GOCACHE in the sandbox, where a
// command gets the workspace's Go build cache; in mode off it passes.
var EnvAllowList = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_*", "TERM", "TZ",
	"GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOSUMDB", "CGO_ENABLED",
}

// Default returns the default spec of the workspace directory and its
// store: WorkspaceWrite, no network, the store hidden (the workspace's
// .harness as it resolves, and store when it is given and lies elsewhere),
// every nested .harness hidden, the user's harness runtime directory
// hidden (RuntimeDir: every workspace's server socket and token; both
// /run/user/<uid>/harness and /tmp/harness-<uid>, whichever this process
// would use, and whatever its environment says), and the
// workspace's own Go build cache (WorkspaceGoCache) as GOCACHE. store may
// be "".
func Default(workspace, store string) (Spec, error) {
	ws, err := resolveDir("workspace", workspace)
	if err != nil {
		return Spec{}, err
	}
	s := Spec{Mode: WorkspaceWrite, Workspace: ws, HiddenNames: []string{StoreName}}
	hidden := []string{filepath.Join(ws, StoreName)}
	if store != "" {
		abs, err := filepath.Abs(store)
		if err != nil {
			return Spec{}, fmt.Errorf("%w: store %q: %v", ErrInvalidSpec, store, err)
		}
		hidden = append(hidden, abs)
	}
	for _, h := range hidden {
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		}
		if !slices.Contains(s.Hidden, h) {
			s.Hidden = append(s.Hidden, h)
		}
	}
	// The user's runtime directory holds every workspace's server socket
	// and token: hidden too, in both of the places it may be, made now
	// if missing so that a server that starts while the command runs is
	// hidden all the same (see runtimeDirs).
	for _, rd := range runtimeDirs() {
		if !slices.Contains(s.Hidden, rd) {
			s.Hidden = append(s.Hidden, rd)
		}
	}
	if cache, err := WorkspaceGoCache(ws); err == nil {
		s.GoCache = cache
	}
	s.Git = GitPathsOf(ws)
	return s, nil
}

// WorkspaceGoCache is the Go build cache of the commands of the
// workspace ws (an absolute path, as resolved):
// os.UserCacheDir()/harness/workspaces/<the first 16 hex digits of the
// SHA-256 of ws and of the directory's identity>/go-build. It is never
// the user's own GOCACHE, nor one another workspace's commands share, nor
// inside a store: a command can poison it (a build result that runs its
// code: go checks a cached program's size only), and only a later command
// of the same workspace, in the sandbox, ever uses it. The same
// workspace is the same directory, not only the same path: a repository
// deleted and another cloned at its path (a CI runner's build directory,
// every job) gets a cache of its own, by the directory's inode and birth
// time (DirIdentity; the device is left out, as a device's number can
// change from one boot to the next). A command in mode off gets none (see
// Spec.Environ).
func WorkspaceGoCache(ws string) (string, error) {
	if !filepath.IsAbs(ws) {
		return "", fmt.Errorf("%w: workspace %q is not an absolute path", ErrInvalidSpec, ws)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("the Go build cache of %s: %w", ws, err)
	}
	key := filepath.Clean(ws)
	if id := strings.Split(DirIdentity(ws), ":"); len(id) == 3 {
		key += "\x00" + id[1] + ":" + id[2] // inode and birth time
	} else if len(id) == 2 {
		key += "\x00" + id[0] + ":" + id[1] // device and inode: no birth times here
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(cachesIn(dir), hex.EncodeToString(sum[:8]), "go-build"), nil
}

// cachesIn is the directory of every workspace's caches in the user's
// cache directory dir.
func cachesIn(dir string) string { return filepath.Join(dir, "harness", "workspaces") }

func resolveDir(what, dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: no %s", ErrInvalidSpec, what)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %s %q: %v", ErrInvalidSpec, what, dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %s %q: %v", ErrInvalidSpec, what, dir, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: %s %q is not a directory", ErrInvalidSpec, what, dir)
	}
	return real, nil
}

// Validate reports whether s can be run as written: a known mode, an
// absolute workspace, absolute paths, no empty name, and no hidden path
// that is or holds the workspace or a writable root. It does not ask the
// system (see Check).
func (s Spec) Validate() error { return s.validate(s.git()) }

// validate is Validate with the workspace's git paths g as s.git() gave
// them: a command's start reads them once for all it resolves.
func (s Spec) validate(g GitPaths) error {
	if _, err := ParseMode(string(s.Mode)); err != nil {
		return err
	}
	if s.Workspace == "" || !filepath.IsAbs(s.Workspace) {
		return fmt.Errorf("%w: workspace %q is not an absolute path", ErrInvalidSpec, s.Workspace)
	}
	for _, list := range []struct {
		field string
		paths []string
	}{{"Writable", s.Writable}, {"ReadOnly", s.ReadOnly}, {"Hidden", s.Hidden}} {
		for _, p := range list.paths {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("%w: %s: %q is not an absolute path", ErrInvalidSpec, list.field, p)
			}
		}
	}
	if s.GoCache != "" && !filepath.IsAbs(s.GoCache) {
		return fmt.Errorf("%w: GoCache %q is not an absolute path", ErrInvalidSpec, s.GoCache)
	}
	for _, n := range s.HiddenNames {
		if n == "" || n == "." || n == ".." || strings.ContainsRune(n, '/') {
			return fmt.Errorf("%w: HiddenNames: %q is not a file name", ErrInvalidSpec, n)
		}
	}
	for _, n := range s.Env {
		if strings.TrimSuffix(n, "*") == "" || strings.ContainsAny(n, "=\x00") {
			return fmt.Errorf("%w: Env: %q is not a variable name or a prefix ending in *", ErrInvalidSpec, n)
		}
	}
	if _, err := netproxy.ParseRules(s.NetworkAllow); err != nil {
		return fmt.Errorf("%w: NetworkAllow: %v", ErrInvalidSpec, err)
	}
	for _, f := range s.SimulateMissing {
		if f != UserNamespaces && f != Landlock {
			return fmt.Errorf("%w: SimulateMissing: %q is not %q or %q", ErrInvalidSpec, f, UserNamespaces, Landlock)
		}
	}
	if err := s.checkWays(g); err != nil {
		return err
	}
	roots := append([]string{s.Workspace}, s.writableRootsOf(g)...)
	for _, h := range s.Hidden {
		for _, r := range roots {
			if within(filepath.Clean(r), filepath.Clean(h)) {
				return fmt.Errorf("%w: hidden path %s holds %s, which the command needs", ErrInvalidSpec, h, r)
			}
		}
	}
	return nil
}

// within reports whether path is dir or lies beneath it.
func within(path, dir string) bool {
	if path == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// referRootsOf are the writable roots beside the workspace a file may be
// linked or moved into from another directory: a linked worktree's git
// directories, in WorkspaceWrite (see the helper's Request.Refer), with
// the git paths g (s.git(), read once by the caller).
func (s Spec) referRootsOf(g GitPaths) []string {
	if s.Mode != WorkspaceWrite {
		return nil
	}
	return slices.Clone(g.Writable)
}

// writableRootsOf is what the command may write beside its temporary
// directory: the workspace (in WorkspaceWrite), the git directories a
// worktree's .git file names, the Go cache and Writable; g is s.git(),
// read once by the caller.
func (s Spec) writableRootsOf(g GitPaths) []string {
	var out []string
	if s.Mode == WorkspaceWrite {
		out = append(out, s.Workspace)
		out = append(out, g.Writable...)
	}
	if s.GoCache != "" {
		out = append(out, s.GoCache)
	}
	for _, w := range s.Writable {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// readOnlyPathsOf is ReadOnly and, in WorkspaceWrite, the workspace's
// git paths g (s.git(), read once by the caller).
func (s Spec) readOnlyPathsOf(g GitPaths) []string {
	out := slices.Clone(s.ReadOnly)
	if s.Mode == WorkspaceWrite {
		for _, p := range g.ReadOnly {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// git is what the sandbox does for the workspace's git now: Git, with what
// the workspace's .git says now made read-only and pinned too, and no other
// writable root.
func (s Spec) git() GitPaths {
	now := GitPathsOf(s.Workspace)
	g := GitPaths{ReadOnly: slices.Clone(s.Git.ReadOnly), Pin: s.Git.Pin, Writable: s.Git.Writable, Refused: s.Git.Refused}
	if g.Refused == "" {
		g.Refused = now.Refused
	}
	for _, p := range now.ReadOnly {
		if !slices.Contains(g.ReadOnly, p) {
			g.ReadOnly = append(g.ReadOnly, p)
		}
	}
	// The session's pin and where .git leads now are both pinned: the
	// person may have moved the git directory and the link since.
	if g.Pin == "" {
		g.Pin = now.Pin
	}
	g.Via = addNew(slices.Clone(s.Git.Via), now.Via...)
	g.Beyond = addNew(slices.Clone(s.Git.Beyond), now.Beyond...)
	g.Ends = addNew(slices.Clone(s.Git.Ends), now.Ends...)
	g.Kept = addNew(slices.Clone(s.Git.Kept), now.Kept...)
	if now.Pin != "" && now.Pin != g.Pin {
		g.Kept = addNew(g.Kept, now.Pin)
	}
	g.TooLong = cmp.Or(now.TooLong, s.Git.TooLong)
	g.Sealed = addNew(slices.Clone(s.Git.Sealed), now.Sealed...)
	g.Named = slices.Clone(now.Named)
	for _, n := range s.Git.Named {
		if !slices.ContainsFunc(g.Named, func(m NamedPath) bool { return m.Path == n.Path }) {
			g.Named = append(g.Named, n)
		}
	}
	// The workspace's .harness, when it is a link: hidden where it leads
	// (Default), and its way kept as a .git link's is, so that a command
	// can neither put a .harness of its own in its place nor make it lead
	// to a directory it can write.
	if w, ok := storeLinkOf(s.Workspace); ok {
		g.Via = addNew(g.Via, w.inside...)
		g.Beyond = addNew(g.Beyond, w.outside...)
		g.tooLong(filepath.Join(s.Workspace, StoreName), w)
		if w.missing != "" {
			g.Beyond = addNew(g.Beyond, w.missing)
		}
	}
	return g
}

// addNew appends to list each of more it does not hold yet.
func addNew(list []string, more ...string) []string {
	for _, m := range more {
		if !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}

// GitPaths is what the sandbox does for the git repository of a
// workspace, so that git add and git commit work in a command but nothing
// a later git of the person's runs (a hook, a config's core.hooksPath or
// core.fsmonitor) can be planted.
type GitPaths struct {
	// ReadOnly: the hooks directory, the config file and the info
	// directory of the git directory, with its commondir, config.worktree
	// and gitdir (for a worktree, of its common directory too, with its
	// config.worktree, the other worktrees' git directories beside it,
	// and the workspace's .git file itself), and the same of every
	// submodule's git directory under modules/.
	ReadOnly []string
	// Pin is the workspace's git directory — its .git directory, or the
	// directory inside the workspace a .git symbolic link leads to —
	// bind-mounted onto itself so that it cannot be renamed away and
	// replaced by a directory with hooks of the command's choosing.
	Pin string
	// Via, for a .git that is a symbolic link, is the link itself and
	// every link and directory inside the workspace its way passes (but
	// the git directory it leads to), each bind-mounted onto itself (a
	// link without following it) so that a command can neither remove,
	// rename nor replace any of them: the link keeps leading where it
	// led when the command started. So are the entries of the ways to a
	// git directory or a common directory inside the workspace, and the
	// control entries (hooks, config, info) that are symbolic links
	// with their ways.
	Via []string
	// Beyond, for a .git that is a symbolic link, is every link and
	// directory outside the workspace its way passes, and the first
	// entry missing on it when it leads nowhere: a command may not start
	// while any of them lies in one of its writable roots (it could make
	// the link lead to a git directory of its own). The same for the
	// way to a common directory and of a control entry that is a link.
	Beyond []string
	// Kept are git directories inside the workspace that a .git file or
	// link leads to, and the common directories their commondir names
	// inside the workspace, refused or not: each is pinned as Pin is,
	// and its hooks, config and info are made when missing and
	// read-only (in ReadOnly), as .git's.
	Kept []string
	// Ends, for a .git link or file that leads to a directory that is
	// not inside the workspace (and not made writable), is that
	// directory, with the common directory a git directory's commondir
	// names outside the workspace, and where a control entry that is a
	// link leads outside it: a command may not start while one lies in
	// or holds one of its writable roots, or lies in the caches of
	// harness's workspaces (the person's git would take it for the
	// repository's git directory, hooks and all).
	Ends []string
	// Writable: for a linked worktree or a submodule, its git directory
	// and the common directory, which lie outside the workspace (objects,
	// refs, index). Only a git directory that verifiably belongs to the
	// workspace is here (see GitPathsOf).
	Writable []string
	// TooLong, when set, names a way (of a .git or .harness link, to
	// the git directory a .git file names, or of a link among its
	// control entries) that passes more than 64 links and directories:
	// no command starts (each entry would be pinned before every
	// command).
	TooLong string
	// Named are the hooks directories (core.hooksPath) and the included
	// config files that the configs the person's git reads for the
	// workspace name inside it, or inside a git directory made writable:
	// each is in ReadOnly, the way to it pinned (in Via), and one that is
	// missing is made when a command starts (see named).
	Named []NamedPath
	// Sealed are the repository's worktrees directories (REPO/.git/worktrees,
	// made when missing): read-only to a command but for the linked
	// worktrees' git directories it finds there when it starts, so that
	// one added while it runs (a delegation's, beside a sibling whose
	// command runs) is out of its reach; git worktree add fails inside a
	// command.
	Sealed []string
	// Refused, when set, says which git directory the workspace's .git
	// file names (or its .git link leads to) and why it is not writable:
	// git in the workspace cannot write its metadata there.
	Refused string
	// modules are the submodules' git directories under .git/modules
	// (inside found them), whose own configs named reads.
	modules []string
}

// GitPathsOf returns the git paths of the workspace ws: none when it has
// no .git.
//
// A .git file ("gitdir: DIR") is a linked worktree's or a submodule's,
// or a plant: anyone who can write the workspace (a command, a tarball)
// can name any directory in it. So DIR and its common directory are
// writable roots only when DIR verifiably belongs to ws:
//
//   - a linked worktree: DIR is REPO/worktrees/NAME (REPO a git
//     directory, with HEAD and objects/), its "gitdir" file leads back to
//     ws/.git and its "commondir" to REPO;
//   - a submodule: DIR lies under some .git/modules/, holds HEAD, has no
//     commondir, and its config's core.worktree leads to ws.
//
// And never a directory that holds ws, the user's home directory, or the
// user's configuration, cache or harness runtime directory. Anything else
// is refused (see GitPaths.Refused): the .git file and DIR's hooks and
// config are read-only, as any .git's, and DIR is not writable.
//
// A .git that is a symbolic link never makes anything writable; it is
// pinned with its way, and what it leads to is kept as gitLinkOf says.
// Wherever git would take a directory for the git directory, its
// commondir is read as git reads it (commonOf), and every control entry
// that is a symbolic link is pinned with its way (controlLinks).
func GitPathsOf(ws string) GitPaths {
	dotgit := filepath.Join(ws, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		// A workspace inside a repository (harness run in a monorepo's
		// subdirectory): the person's git there reads the enclosing
		// repository's configs, whose git directory is out of the
		// command's reach, but a hooks directory or an included config
		// they name may lie inside the workspace (husky's
		// frontend/.husky/_).
		// A git directory of that repository inside the workspace (its
		// .git a file or link that leads here: git init
		// --separate-git-dir) is kept as .git is.
		var g GitPaths
		if root, dirs := enclosingRepo(ws); root != "" {
			for _, d := range dirs {
				if d != ws && within(d, ws) {
					g.keep(d)
				}
			}
			g.namedFor(ws, root, dirs)
			g.controlLinks(ws)
		}
		return g
	}
	var g GitPaths
	switch {
	case fi.IsDir():
		// Besides the control entries, what git reads as keep makes it
		// read-only in any other git directory: commondir says where the
		// config is, config.worktree is read as config. What lies under
		// modules/ and worktrees/ is kept too (inside).
		ro := append(controlOf(dotgit), filepath.Join(dotgit, "commondir"), filepath.Join(dotgit, "config.worktree"), filepath.Join(dotgit, "gitdir"))
		g = GitPaths{ReadOnly: ro, Pin: dotgit}
		g.inside(dotgit, true)
		g.commonOf(ws, dotgit)
	case fi.Mode()&fs.ModeSymlink != 0:
		g = gitLinkOf(ws, dotgit)
	case fi.Mode().IsRegular():
		g = gitFileOf(ws, dotgit)
	default:
		return GitPaths{}
	}
	g.named(ws)
	g.controlLinks(ws)
	return g
}

// gitFileOf is GitPathsOf of a workspace ws whose .git is the regular
// file file: ws/.git itself, or the file a .git link leads to, which git
// reads as it reads a .git file. It is read-only, first of all. The way
// to the git directory it names is followed entry by entry (wayTo): its
// entries in the workspace, and those inside a git directory made
// writable (a worktree's REPO/worktrees), are pinned; a git directory in
// the workspace is kept as .git is (GitPaths.Kept), or read-only whole
// when refused and not a git directory; a refused one outside the
// workspace must hold no writable root where git looks (GitPaths.Ends),
// and the way's other entries outside, and a missing one, no root
// either (GitPaths.Beyond).
func gitFileOf(ws, file string) GitPaths {
	gitdir, ok := gitdirIn(file, ws)
	if !ok {
		return GitPaths{ReadOnly: []string{file}}
	}
	way := wayTo(ws, gitdir)
	if way.err == nil {
		gitdir = way.end
	}
	g := GitPaths{ReadOnly: append([]string{file}, controlOf(gitdir)...)}
	g.tooLong(file, way)
	common, err := gitdirOf(ws, gitdir)
	if err != nil {
		g.Refused = err.Error()
		g.keepWay(way, nil)
		fi, serr := os.Stat(gitdir)
		switch {
		case way.err != nil:
			if way.missing != "" {
				g.Beyond = addNew(g.Beyond, way.missing)
			}
		case gitdir != ws && within(gitdir, ws):
			if serr == nil && fi.IsDir() && isGitDir(gitdir) {
				g.keep(gitdir)
				g.commonOf(ws, gitdir)
			} else {
				// Not a git directory: a command could make it one.
				g.ReadOnly = addNew(g.ReadOnly, gitdir)
			}
		default:
			g.Ends = addNew(g.Ends, gitdir)
			g.commonOf(ws, gitdir)
		}
		return g
	}
	if common != gitdir {
		g.ReadOnly = append(g.ReadOnly, controlOf(common)...)
		g.ReadOnly = append(g.ReadOnly, filepath.Join(common, "config.worktree"))
		// The other worktrees' git directories beside this one: the
		// person's git in those worktrees reads their commondir, gitdir
		// and config.worktree, which are read-only (their HEAD, index and
		// logs are not: git gc and git reflog expire write them), and
		// REPO/worktrees is pinned and sealed (nothing can be made or
		// removed there: git worktree add fails in a command).
		others := otherWorktrees(gitdir)
		g.ReadOnly = append(g.ReadOnly, worktreeControl(others)...)
		g.Via = addNew(g.Via, others...)
		g.Sealed = addNew(g.Sealed, filepath.Dir(gitdir))
		g.Via = addNew(g.Via, filepath.Dir(gitdir))
		// The worktree's git directory is a writable root outside the
		// workspace, where the observer does not look: its commondir, which
		// says where the config is, is read-only too, and so is its gitdir,
		// the back-link that makes it this workspace's.
		g.ReadOnly = append(g.ReadOnly, filepath.Join(gitdir, "config.worktree"), filepath.Join(gitdir, "commondir"), filepath.Join(gitdir, "gitdir"))
	}
	// The commondir of the git directory and of the common directory,
	// which the person's git in the main worktree, or in the submodule,
	// reads (read-only where it exists; a missing one is not refused but
	// observed), and a submodule's config.worktree.
	g.ReadOnly = addNew(g.ReadOnly, filepath.Join(gitdir, "commondir"), filepath.Join(common, "commondir"), filepath.Join(common, "config.worktree"))
	g.inside(common, false)
	for _, d := range []string{gitdir, common} {
		if !within(d, ws) && !slices.Contains(g.Writable, d) {
			g.Writable = append(g.Writable, d)
		}
	}
	// The way to the git directory is kept from the command: where it
	// passes the workspace or the git directories made writable (a
	// worktree's REPO/worktrees), it is pinned; the git directories in the
	// workspace are kept as .git is.
	g.keepWay(way, g.Writable)
	for _, d := range []string{gitdir, common} {
		switch {
		case d != ws && within(d, ws):
			g.keep(d)
		case strictlyInAny(d, g.Writable):
			g.Via = addNew(g.Via, d)
		}
	}
	return g
}

// otherWorktrees is every entry of REPO/worktrees but gitdir, a linked
// worktree's git directory REPO/worktrees/NAME, up to maxModuleDirs.
func otherWorktrees(gitdir string) []string {
	return entriesBut(filepath.Dir(gitdir), gitdir)
}

// entriesBut is every entry of the directory dir but the path but, up to
// maxModuleDirs, in sorted order.
func entriesBut(dir, but string) []string {
	f, err := os.OpenFile(dir, dirFlags, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxModuleDirs)
	slices.Sort(names)
	var out []string
	for _, n := range names {
		if p := filepath.Join(dir, n); p != but {
			out = append(out, p)
		}
	}
	return out
}

// inside keeps what lies in the git directory dir that the person's git
// in another worktree reads: every submodule's git directory under
// modules/ (its control paths, commondir and config.worktree read-only;
// modules/, each git directory there and each directory on the way to
// one pinned, so that none can be renamed away and made anew) and, with
// worktrees, what git reads in every linked worktree's git directory under
// worktrees/ to find its config (worktreeControl; worktrees/ pinned).
func (g *GitPaths) inside(dir string, worktrees bool) {
	ro, pins, gitdirs := modulesOf(dir)
	g.ReadOnly = addNew(g.ReadOnly, ro...)
	g.modules = addNew(g.modules, gitdirs...)
	g.Via = addNew(g.Via, pins...)
	if !worktrees {
		return
	}
	wt := filepath.Join(dir, "worktrees")
	g.Sealed = addNew(g.Sealed, wt)
	if fi, err := os.Lstat(wt); err == nil && fi.IsDir() {
		g.Via = addNew(g.Via, wt)
		others := entriesBut(wt, "")
		g.ReadOnly = addNew(g.ReadOnly, worktreeControl(others)...)
		g.Via = addNew(g.Via, others...)
	}
}

// worktreeControl is what git reads in each of the linked worktrees' git
// directories dirs to find the config: its commondir, gitdir and
// config.worktree. The rest (HEAD, index, logs, refs) stays writable:
// git gc, git reflog expire and git commit in a worktree write it. Each
// of dirs is pinned besides (GitPaths.Via), so that none can be renamed
// away and made anew without a commondir, with a config of its own; so
// git worktree remove and prune of those worktrees fail in a command.
func worktreeControl(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Join(d, "commondir"), filepath.Join(d, "gitdir"), filepath.Join(d, "config.worktree"))
	}
	return out
}

// touch makes an empty file at p when nothing is there (it must exist
// to be bound read-only); what is there is left as it is.
func touch(p string) {
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		f.Close()
	}
}

// exists reports whether there is an entry at p (a link not followed).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// gitdirIn is the git directory the .git file file names ("gitdir:
// DIR" on its first line), a relative DIR taken against base, the
// directory the file is in; false when the file cannot be read or names
// none.
func gitdirIn(file, base string) (string, bool) {
	data, err := readSmall(file)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	gitdir := strings.TrimSpace(dir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(base, gitdir)
	}
	return gitdir, true
}

// enclosingRepo is the worktree root and the git directories (the git
// directory, and the common directory its commondir names) of the
// repository git finds from ws upwards when ws has no .git of its own;
// "" when there is none.
func enclosingRepo(ws string) (root string, dirs []string) {
	for d := filepath.Dir(ws); ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dotgit); err == nil && !(fi.IsDir() && !isGitDir(dotgit)) {
			// (A .git directory that is no repository: git goes on up.)
			gitdir := dotgit
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				real, err := filepath.EvalSymlinks(dotgit)
				if err != nil {
					return "", nil
				}
				gitdir = real
			case !fi.IsDir():
				g, ok := gitdirIn(dotgit, d)
				if !ok {
					return "", nil
				}
				gitdir = g
			}
			dirs = []string{gitdir}
			if c, err := readLink(gitdir, "commondir"); err == nil {
				dirs = append(dirs, c)
			}
			return d, dirs
		}
		if d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// gitdirOf returns the common directory of gitdir, the resolved directory
// the .git file of the workspace ws names, when gitdir is a linked
// worktree's or a submodule's git directory of ws (see GitPathsOf), and
// may be a writable root; an error wrapping errGitdir that says why not
// otherwise.
func gitdirOf(ws, gitdir string) (string, error) {
	refuse := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w %s: %s", errGitdir, gitdir, fmt.Sprintf(format, args...))
	}
	if fi, err := os.Stat(gitdir); err != nil || !fi.IsDir() {
		return refuse("not a directory")
	}
	if !isGitDir(gitdir) {
		return refuse("not a git directory (no HEAD)")
	}
	var common string
	if parent := filepath.Dir(gitdir); filepath.Base(parent) == "worktrees" {
		// A linked worktree: REPO/worktrees/NAME.
		repo := filepath.Dir(parent)
		back, err := readLink(gitdir, "gitdir")
		if err != nil {
			return refuse("not a linked worktree of this workspace: %v", err)
		}
		if back != filepath.Join(ws, ".git") {
			return refuse("a linked worktree of %s, not of this workspace", filepath.Dir(back))
		}
		c, err := readLink(gitdir, "commondir")
		if err != nil {
			return refuse("a linked worktree without a common directory: %v", err)
		}
		if c != repo {
			return refuse("its commondir names %s, not %s", c, repo)
		}
		if fi, err := os.Stat(filepath.Join(repo, "objects")); !isGitDir(repo) || err != nil || !fi.IsDir() {
			return refuse("%s is not a git directory", repo)
		}
		common = repo
	} else {
		// A submodule: .../.git/modules/NAME..., its core.worktree ws.
		if !underModules(gitdir) {
			return refuse("neither a linked worktree's git directory (REPO/worktrees/NAME) nor a submodule's (.git/modules/NAME)")
		}
		if exists(filepath.Join(gitdir, "commondir")) {
			return refuse("a submodule's git directory with a commondir")
		}
		wt, ok := configWorktree(filepath.Join(gitdir, "config"))
		if !ok {
			return refuse("a submodule's git directory whose config names no core.worktree")
		}
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(gitdir, wt)
		}
		if real, err := filepath.EvalSymlinks(wt); err == nil {
			wt = real
		}
		if wt != ws {
			return refuse("a submodule's git directory whose core.worktree is %s, not this workspace", wt)
		}
		common = gitdir
	}
	for _, d := range []string{gitdir, common} {
		if within(ws, d) {
			return refuse("%s holds the workspace", d)
		}
		for _, p := range protectedDirs() {
			if within(p, d) {
				return refuse("%s holds %s", d, p)
			}
		}
	}
	return common, nil
}

// isGitDir reports whether dir holds a HEAD file.
func isGitDir(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, "HEAD"))
	return err == nil && fi.Mode().IsRegular()
}

// readLink returns the path the file name in the git directory dir holds
// (a "gitdir" or "commondir" file), resolved against dir and through
// symbolic links.
func readLink(dir, name string) (string, error) {
	data, err := readSmall(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("no %s file: %v", name, err)
	}
	p := strings.TrimSpace(string(data))
	if p == "" || strings.ContainsRune(p, '\n') {
		return "", fmt.Errorf("its %s file does not hold one path", name)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("its %s file names %s, which does not exist", name, p)
	}
	return real, nil
}

// maxGitFile bounds the git files GitPathsOf reads (.git, gitdir,
// commondir, config).
const maxGitFile = 1 << 20

// readSmall reads the file path when it is a regular file, not a link, of
// at most maxGitFile bytes: a FIFO or a link to /dev/zero planted in the
// workspace cannot stall or swell the start of every command. The file is
// opened first, without following a link or waiting on a FIFO, and what
// is open is checked, so that a command cannot swap a FIFO in between.
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, gitFileFlags, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", path) // a link
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > maxGitFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxGitFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxGitFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxGitFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxGitFile)
	}
	return data, nil
}

// underModules reports whether the absolute path dir lies beneath a
// .git/modules directory.
func underModules(dir string) bool {
	parts := strings.Split(dir, string(filepath.Separator))
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == ".git" && parts[i+1] == "modules" {
			return true
		}
	}
	return false
}

// configWorktree returns the last core.worktree the git config file
// names. It reads the plain form git writes ("[core]", then
// "worktree = VALUE", optionally quoted); what it cannot read counts as
// none, which refuses the directory.
func configWorktree(file string) (string, bool) {
	data, err := readSmall(file)
	if err != nil {
		return "", false
	}
	var value string
	found, core := false, false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			core = strings.EqualFold(line, "[core]")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !core || !ok || !strings.EqualFold(strings.TrimSpace(k), "worktree") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if v == "" || strings.ContainsAny(v, "\\\";#") {
			found = false
			continue
		}
		value, found = v, true
	}
	return value, found
}

// protectedDirs is what a git directory that holds it is never writable
// for: the user's home directory and configuration, cache and harness
// runtime directories, as they resolve.
func protectedDirs() []string {
	var out []string
	add := func(d string, err error) {
		if err != nil || d == "" || !filepath.IsAbs(d) {
			return
		}
		out = append(out, filepath.Clean(d))
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			out = append(out, real)
		}
	}
	add(os.UserHomeDir())
	add(os.UserConfigDir())
	add(os.UserCacheDir())
	add(RuntimeDirPath(), nil)
	return out
}

// controlOf is what in the git directory dir can make git run a program
// and is made read-only: hooks/, config and info/ (attributes, which pick
// filters and diff drivers), in that order.
func controlOf(dir string) []string {
	out := make([]string, 0, 3)
	for _, c := range helper.GitControl[:3] { // hooks, config, info
		out = append(out, filepath.Join(dir, c))
	}
	return out
}

// madeWhenMissing are the names in a git directory a command's start
// makes when missing, to cover them (makeCovered): controlOf's, and
// config.worktree.
var madeWhenMissing = append(slices.Clone(helper.GitControl[:3]), "config.worktree")

// maxModuleDirs bounds how many directories modulesOf lists, so that a
// tree planted under .git/modules cannot slow every command's start. What
// lies past it is not made read-only; the observer still records what a
// command writes there.
const maxModuleDirs = 4096

// modulesOf is the control paths (controlOf), commondir and
// config.worktree of every submodule's git directory under dir/modules:
// each directory there that holds a HEAD; and the directories to pin:
// dir/modules, each git directory there and each directory on the way to
// one. Their objects, refs and logs are not searched; a submodule's name
// may hold "/", so every other directory is, up to maxModuleDirs.
func modulesOf(dir string) (ro, pins, gitdirs []string) {
	listed := 0
	var walk func(d string, depth int) bool
	walk = func(d string, depth int) bool {
		if depth > 32 || listed >= maxModuleDirs {
			return false
		}
		listed++
		entries, err := readDir(d)
		if err != nil {
			return false
		}
		gitdir := false
		for _, e := range entries {
			if e.Name() == "HEAD" && e.Type().IsRegular() {
				gitdir = true
				gitdirs = append(gitdirs, d)
				ro = append(ro, controlOf(d)...)
				ro = append(ro, filepath.Join(d, "commondir"), filepath.Join(d, "config.worktree"))
			}
		}
		at := len(pins)
		holds := gitdir
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			switch e.Name() {
			case "objects", "refs", "logs", "hooks", "info":
				if gitdir {
					continue
				}
			}
			if walk(filepath.Join(d, e.Name()), depth+1) {
				holds = true
			}
		}
		if holds {
			pins = slices.Insert(pins, at, d)
		}
		return holds
	}
	walk(filepath.Join(dir, "modules"), 0)
	return ro, pins, gitdirs
}

// readDir is os.ReadDir, but a FIFO a command put in the directory's
// place does not stall it (see dirFlags).
func readDir(d string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(d, dirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// allowList is EnvAllowList and Env.
func (s Spec) allowList() []string {
	out := slices.Clone(EnvAllowList)
	for _, n := range s.Env {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// EnvNames is the names a command of s may get ("LC_*" a prefix): the
// allow-list, Env, TMPDIR and, with a GoCache or in mode off, GOCACHE.
func (s Spec) EnvNames() []string {
	out := append(s.allowList(), "TMPDIR")
	if s.GoCache != "" || s.Mode == Off {
		out = append(out, "GOCACHE")
	}
	if s.Proxied() {
		out = append(out, ProxyEnv...)
	}
	return out
}

// Environ returns the environment a command of s gets from env
// ("NAME=value" entries, as os.Environ returns): the variables the
// allow-list names (EnvAllowList and Spec.Env; names compared exactly, as
// Linux does), TMPDIR set to tmp, and GOCACHE set to Spec.GoCache when it
// is given. It is the same in every mode but for GOCACHE: in mode off, a
// command runs with the user's authority and gets the user's own GOCACHE
// from env (or none, and go's default), never Spec.GoCache, which a
// sandboxed command could have written.
func (s Spec) Environ(env []string, tmp string) []string {
	allow := s.allowList()
	off := s.Mode == Off
	passes := func(name string) bool {
		if name == "TMPDIR" || (name == "GOCACHE" && !off) || (s.Proxied() && slices.Contains(ProxyEnv, name)) {
			return false
		}
		if name == "GOCACHE" {
			return true
		}
		for _, a := range allow {
			if p, ok := strings.CutSuffix(a, "*"); ok {
				if strings.HasPrefix(name, p) {
					return true
				}
			} else if name == a {
				return true
			}
		}
		return false
	}
	out := make([]string, 0, len(allow)+2)
	seen := map[string]bool{}
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || seen[name] || !passes(name) {
			continue
		}
		seen[name] = true
		out = append(out, kv)
	}
	if tmp != "" {
		out = append(out, "TMPDIR="+tmp)
	}
	if s.GoCache != "" && !off {
		out = append(out, "GOCACHE="+s.GoCache)
	}
	if s.Proxied() {
		for _, n := range ProxyEnv {
			out = append(out, n+"="+ProxyURL)
		}
	}
	return out
}

// Record returns the written form of s, with the mechanism that applies
// it on this system: what a person is shown before approving a command,
// and what replay tells back.
func (s Spec) Record() facts.Sandbox {
	r := facts.Sandbox{
		Mode:    string(s.Mode),
		Network: s.Network || s.Mode == Off,
		Temp:    filepath.Join(os.TempDir(), TempPattern),
		Env:     s.EnvNames(),
	}
	if s.Mode == Off {
		r.Mechanism = "none"
		return r
	}
	// The workspace's .git is read once: the three fields below say what
	// one reading of it gives.
	g := s.git()
	r.Writable = s.writableRootsOf(g)
	// What is read-only as a command starts: what exists, and what its
	// start makes to cover (makeCovered); not a commondir or gitdir that
	// is not there, which a command may make (and is observed doing).
	for _, p := range s.readOnlyPathsOf(g) {
		switch {
		case exists(p), slices.Contains(madeWhenMissing, filepath.Base(p)),
			slices.ContainsFunc(g.Named, func(n NamedPath) bool { return n.Path == p }):
			r.ReadOnly = append(r.ReadOnly, p)
		}
	}
	if s.Mode == WorkspaceWrite {
		r.GitRefused = g.Refused
	}
	r.Hidden = slices.Clone(s.Hidden)
	r.HiddenNames = slices.Clone(s.HiddenNames)
	if s.Proxied() {
		r.NetworkAllow = slices.Clone(s.NetworkAllow)
	}
	sup := Probe(s.SimulateMissing...)
	r.Mechanism = mechanism(s, sup)
	if sup.Err() == nil {
		r.LandlockABI = min(sup.LandlockABI, maxABI)
	}
	return r
}

func mechanism(s Spec, sup Support) string {
	if err := sup.Err(); err != nil {
		return "unavailable: " + err.Error()
	}
	ns := "user, pid, mount, ipc, uts"
	if !s.Network {
		ns += ", network"
	}
	if s.Proxied() {
		ns += "; the allow-list's proxy on " + ProxyAddr
	}
	helper := "re-executed helper"
	if _, small := helperProgram(); small {
		helper = "helper " + HelperName
	}
	return fmt.Sprintf("linux namespaces (%s) and landlock ABI %d; %s as pid 1; no capabilities, no_new_privs", ns, min(sup.LandlockABI, maxABI), helper)
}

// Clone returns a copy of s that shares no slice with it.
func (s Spec) Clone() Spec {
	s.Writable = slices.Clone(s.Writable)
	s.ReadOnly = slices.Clone(s.ReadOnly)
	s.Hidden = slices.Clone(s.Hidden)
	s.HiddenNames = slices.Clone(s.HiddenNames)
	s.Env = slices.Clone(s.Env)
	s.NetworkAllow = slices.Clone(s.NetworkAllow)
	s.SimulateMissing = slices.Clone(s.SimulateMissing)
	s.Git.ReadOnly, s.Git.Writable = slices.Clone(s.Git.ReadOnly), slices.Clone(s.Git.Writable)
	s.Git.Via, s.Git.Beyond, s.Git.Ends = slices.Clone(s.Git.Via), slices.Clone(s.Git.Beyond), slices.Clone(s.Git.Ends)
	s.Git.Sealed = slices.Clone(s.Git.Sealed)
	s.Git.Kept, s.Git.Named = slices.Clone(s.Git.Kept), slices.Clone(s.Git.Named)
	return s
}

// Prepare makes in the workspace what a command's sandbox covers and
// must find there to cover (see makeCovered), as each command's start
// does: and, with Nested, the missing hooks/, config and info/ of the
// nested git directories a command's start would keep (see nestedGits),
// as the Reader's last reading finds them. The runtime calls it before
// its first reading of the workspace and again before the reading each
// action begins with (action.Boundary.Prepare), so that what is made is
// there before the action and is not recorded as its doing: a command
// that made a .git directory is recorded making it, and what harness
// then made in it is a change of the workspace before the next action
// (workspace.changed), never that action's. A spec of another mode makes
// nothing.
func (s Spec) Prepare() {
	if s.Mode != WorkspaceWrite {
		return
	}
	g := s.git()
	g = s.makeCovered(g, false)
	if s.Nested == nil {
		return
	}
	rels, ok := s.Nested.last(append(slices.Clone(s.HiddenNames), ".git"))
	if !ok {
		return
	}
	var gits []string
	for _, rel := range rels {
		if filepath.Base(filepath.FromSlash(rel)) == ".git" {
			gits = append(gits, rel)
		}
	}
	// A workspace whose nested repositories would refuse a command has
	// nothing made: that command does not start.
	if dirs, _, err := nestedGits(s.Workspace, gits, g, s.writableRootsOf(g), true); err == nil {
		for _, d := range dirs {
			helper.MakeGitControl(d)
		}
	}
}

// makeCovered makes, in workspace-write mode, what must exist to be
// covered read-only or sealed: the hooks/, config, info/ and an empty
// config.worktree of the workspace's git directory and of each git
// directory in the workspace kept as it is (git init makes the first
// three; config.worktree, which git reads as config once
// extensions.worktreeConfig is set, as git sparse-checkout sets it, is
// empty: it says nothing, and a command cannot make one of its own); the
// config.worktree of a linked worktree's git directory and of its common
// directory, of each other linked worktree's git directory, and of each
// submodule's git directory (one with a HEAD) under modules/; the
// .git/worktrees directory to seal; the missing hooks directories and
// included configs git's configs name (GitPaths.makeNamed, which also
// pins the ways to them in g); and, with store, the workspace's .harness
// where the store lives elsewhere (an empty directory, which no reading
// of the workspace records: Prepare leaves it to the command's start). A
// missing commondir is not made: git would read an empty one as naming
// the directory itself.
func (s Spec) makeCovered(g GitPaths, store bool) GitPaths {
	if s.Mode != WorkspaceWrite {
		return g
	}
	for _, d := range addNew(addNew(nil, g.Pin), g.Kept...) {
		if d == "" {
			continue
		}
		ctl := controlOf(d)
		_ = os.Mkdir(ctl[0], 0o755)
		touch(ctl[1])
		_ = os.Mkdir(ctl[2], 0o755)
		touch(filepath.Join(d, "config.worktree"))
	}
	for _, p := range g.ReadOnly {
		d := filepath.Dir(p)
		other := filepath.Base(filepath.Dir(d)) == "worktrees" && slices.Contains(g.Via, d)
		if filepath.Base(p) == "config.worktree" && (slices.Contains(g.Writable, d) || other || exists(filepath.Join(d, "HEAD"))) {
			touch(p) // and a submodule's git directory's
		}
	}
	if dot := filepath.Join(s.Workspace, StoreName); store && (slices.Contains(s.Hidden, dot) || slices.Contains(s.HiddenNames, StoreName)) {
		// The workspace's .harness must exist to be covered: where there is
		// none (the store lives elsewhere), an empty one is made, so that a
		// command cannot create .harness/project.json, which the next run
		// would read as settings. (Landlock cannot deny one name in a
		// directory it lets the command write.) Where it cannot be made
		// (a workspace the user may not write), the command, which has the
		// user's uid, cannot make it either; one made meanwhile by another
		// is covered as well.
		if _, err := os.Lstat(dot); errors.Is(err, fs.ErrNotExist) {
			_ = os.Mkdir(dot, 0o755)
		}
	}
	// The hooks directories and included configs a config names that are
	// missing: made, and the ways to them pinned.
	g.Via = slices.Clone(g.Via)
	g.makeNamed(s.Workspace)
	// The worktrees directories must exist to be sealed: git makes one
	// with its first linked worktree, here or by the harness while the
	// command runs.
	for _, d := range g.Sealed {
		if fi, err := os.Lstat(filepath.Dir(d)); err == nil && fi.IsDir() {
			_ = os.Mkdir(d, 0o755)
		}
	}
	return g
}
