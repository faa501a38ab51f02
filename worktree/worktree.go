package worktree

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/safegit"
)

// Tree is a thread's worktree, as its thread records it.
type Tree struct {
	// Repo is the top of the repository the workspace is in.
	Repo string
	// Workspace is the workspace the tree was made of (Repo or a
	// directory below it).
	Workspace string
	// Path is the worktree's top; Root is where the thread works in it
	// (the workspace's place in the repository).
	Path, Root string
	// Branch is the tree's branch (see Branch); Base the commit it began
	// from: the workspace as it was, uncommitted files included.
	Branch, Base string
	// GitDir is the worktree's own git directory, in the repository's:
	// Finish names it rather than follow the worktree's .git file, which
	// the thread could have rewritten to lead elsewhere.
	GitDir string
}

// Finished is what Finish left: the branch and its last commit, whether
// the thread changed anything, and the worktree's path when it was kept.
type Finished struct {
	Branch, Base, Head string
	// Changed are the files the branch changes, relative to the
	// repository's top, sorted.
	Changed []string
	// Kept is the worktree's path when it was kept (the thread failed);
	// "" when it was removed.
	Kept string
}

// Options say where worktrees go and what of the workspace they leave
// out.
type Options struct {
	// Dir is the directory worktrees are made in; it must be outside the
	// workspace. "" is DefaultDir.
	Dir string
	// Exclude are paths, relative to the workspace, that a worktree does
	// not take from the workspace (the store's directory).
	Exclude []string
}

// DefaultDir is where worktrees go by default: the user's cache
// directory, under harness/worktrees, outside every workspace.
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("worktrees: no directory for them: %w", err)
	}
	return filepath.Join(d, "harness", "worktrees"), nil
}

// branchPrefix begins every branch this package makes.
const branchPrefix = "harness/"

// Branch is the branch of the worktree named name: "harness/" and the
// name with anything a ref may not hold replaced, and a digest of the name
// when it had to be changed (so two names never share a branch).
func Branch(name string) string {
	clean := unsafeRef().ReplaceAllString(name, "-")
	clean = strings.Trim(clean, ".-/")
	for strings.Contains(clean, "..") {
		clean = strings.ReplaceAll(clean, "..", ".")
	}
	if clean != name || clean == "" || len(clean) > 100 {
		if len(clean) > 80 {
			clean = clean[:80]
		}
		sum := sha256.Sum256([]byte(name))
		clean = strings.TrimRight(clean, ".-") + "-" + hex.EncodeToString(sum[:6])
	}
	return branchPrefix + clean
}

// unsafeRef matches what a branch name is kept free of.
var unsafeRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) }) // at first use, not at start-up

// top is the top of the repository dir is in.
func top(ctx context.Context, dir string) (string, error) {
	out, err := safegit.Run(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s: %w: %w", dir, ErrNotRepository, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Create makes the worktree named name (a thread's id) of the workspace:
// a commit of the workspace as it is now (tracked, changed and untracked
// files, but not ignored ones nor opts.Exclude), checked out on the branch
// Branch(name) in opts.Dir. Made again with the same name, it is the same
// worktree (a run that crashed after making it finds it).
func Create(ctx context.Context, workspace, name string, opts Options) (Tree, error) {
	ws, err := filepath.Abs(workspace)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		return Tree{}, fmt.Errorf("worktree of %s: %w", workspace, err)
	}
	repo, err := top(ctx, ws)
	if err != nil {
		return Tree{}, err
	}
	rel, err := filepath.Rel(repo, ws)
	if err != nil || strings.HasPrefix(rel, "..") {
		return Tree{}, fmt.Errorf("worktree of %s: not inside %s: %w", ws, repo, ErrNotRepository)
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return Tree{}, err
		}
	}
	if abs, err := filepath.Abs(dir); err == nil && (within(abs, ws) || within(abs, repo)) {
		return Tree{}, fmt.Errorf("worktrees in %s: %w %s", abs, ErrInside, repo)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Tree{}, fmt.Errorf("worktrees in %s: %w", dir, err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return Tree{}, fmt.Errorf("worktrees in %s: %w", opts.Dir, err)
	}
	if within(dir, ws) || within(dir, repo) {
		return Tree{}, fmt.Errorf("worktrees in %s: %w %s", dir, ErrInside, repo)
	}
	branch := Branch(name)
	sum := sha256.Sum256([]byte(repo))
	path := filepath.Join(dir, hex.EncodeToString(sum[:6]), strings.TrimPrefix(branch, branchPrefix))
	t := Tree{Repo: repo, Workspace: ws, Path: path, Root: filepath.Join(path, rel), Branch: branch}

	// Made before: the branch is there, and its worktree.
	if base, ok := existing(ctx, t); ok {
		t.Base = base
		return t, t.gitDir(ctx)
	}
	base, err := snapshot(ctx, repo, path+".index", rel, opts.Exclude)
	if err != nil {
		return Tree{}, err
	}
	t.Base = base
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Tree{}, fmt.Errorf("worktree %s: %w", path, err)
	}
	// The base is kept beside the worktree, so a Create after a crash
	// finds the tree it made.
	if err := os.WriteFile(path+".base", []byte(base+"\n"), 0o600); err != nil {
		return Tree{}, fmt.Errorf("worktree %s: %w", path, err)
	}
	if err := add(ctx, t); err != nil {
		return Tree{}, fmt.Errorf("worktree %s: %w", name, err)
	}
	if err := t.gitDir(ctx); err != nil {
		return Tree{}, err
	}
	// The sandbox keeps an empty config.worktree in each linked worktree's
	// git directory, read-only to commands (one a command made there would
	// be read as config by the person's git in that worktree once
	// extensions.worktreeConfig is set); it makes a missing one before a
	// command runs. Made here, with the worktree, it is the delegation's
	// doing, not the first command's after it, in the record.
	if f, err := os.OpenFile(filepath.Join(t.GitDir, "config.worktree"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		_ = f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return Tree{}, fmt.Errorf("worktree %s: %w", t.Path, err)
	}
	return t, nil
}

// addTries is how many times add tries git worktree add.
const addTries = 3

// add makes t's worktree on a new branch at t.Base. A try that fails (on
// a loaded machine another git of the repository can hold what this one
// needs a moment) is tried again after a pause: first a worktree made
// meanwhile is taken as it is, the registrations of worktrees whose
// directories are gone are pruned, and a branch an earlier try left at
// t.Base is checked out rather than made again.
func add(ctx context.Context, t Tree) error {
	var err error
	for try := range addTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(time.Duration(try) * 250 * time.Millisecond):
			}
			if _, ok := existing(ctx, t); ok {
				return nil
			}
			_, _ = safegit.Run(ctx, t.Repo, "worktree", "prune")
		}
		args := []string{"worktree", "add", "-q", "-b", t.Branch, t.Path, t.Base}
		if out, rerr := safegit.Run(ctx, t.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+t.Branch); rerr == nil && strings.TrimSpace(string(out)) == t.Base {
			args = []string{"worktree", "add", "-q", t.Path, t.Branch}
		}
		if _, err = safegit.Run(ctx, t.Repo, args...); err == nil {
			return nil
		}
	}
	return err
}

// gitDir sets t.GitDir: the worktree's git directory as git just made it.
func (t *Tree) gitDir(ctx context.Context) error {
	out, err := safegit.Run(ctx, t.Path, "rev-parse", "--path-format=absolute", "--git-dir")
	if err != nil {
		return fmt.Errorf("worktree %s: %w", t.Path, err)
	}
	t.GitDir = strings.TrimSpace(string(out))
	return nil
}

// existing reports whether t's worktree is there, on its branch, and the
// base it records.
func existing(ctx context.Context, t Tree) (string, bool) {
	if _, err := os.Stat(filepath.Join(t.Path, ".git")); err != nil {
		return "", false
	}
	out, err := safegit.Run(ctx, t.Path, "rev-parse", "--abbrev-ref", "HEAD")
	if err != nil || strings.TrimSpace(string(out)) != t.Branch {
		return "", false
	}
	base, err := os.ReadFile(t.Path + ".base")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(base)), true
}

// identity is who the commits of this package are by.
var identity = []string{
	"GIT_AUTHOR_NAME=harness", "GIT_AUTHOR_EMAIL=harness@localhost.invalid",
	"GIT_COMMITTER_NAME=harness", "GIT_COMMITTER_EMAIL=harness@localhost.invalid",
	"GIT_AUTHOR_DATE=2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2000-01-01T00:00:00Z",
}

// git runs safe git in dir with more environment, input from stdin.
func git(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd, err := safegit.CommandEnv(ctx, dir, env, args...)
	if err != nil {
		return nil, err
	}
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 4000 {
			msg = msg[:4000] + "…"
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out, fmt.Errorf("git %s: %s", args[0], msg)
		}
		return out, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

// snapshot commits the workspace as it is now, through an index of its
// own (a copy of the repository's, so unchanged files are not hashed
// again), and returns the commit: HEAD itself when nothing differs.
func snapshot(ctx context.Context, repo, index, rel string, exclude []string) (string, error) {
	head, err := safegit.Run(ctx, repo, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("worktree of %s: %w: %w", repo, ErrNotRepository, err)
	}
	headID := strings.TrimSpace(string(head))
	gitIndex, err := safegit.Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", fmt.Errorf("worktree of %s: %w", repo, err)
	}
	if err := os.MkdirAll(filepath.Dir(index), 0o700); err != nil {
		return "", fmt.Errorf("worktree of %s: %w", repo, err)
	}
	defer os.Remove(index)
	if err := copyFile(strings.TrimSpace(string(gitIndex)), index); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("worktree of %s: copy the index: %w", repo, err)
	}
	env := append([]string{"GIT_INDEX_FILE=" + index}, identity...)
	args := []string{"add", "-A", "--", "."}
	for _, x := range exclude {
		args = append(args, ":(exclude,literal)"+filepath.ToSlash(filepath.Join(rel, x)))
	}
	if _, err := git(ctx, repo, env, nil, args...); err != nil {
		return "", fmt.Errorf("worktree of %s: take the workspace: %w", repo, err)
	}
	tree, err := git(ctx, repo, env, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("worktree of %s: %w", repo, err)
	}
	headTree, err := safegit.Run(ctx, repo, "rev-parse", "HEAD^{tree}")
	if err != nil {
		return "", fmt.Errorf("worktree of %s: %w", repo, err)
	}
	if bytes.Equal(bytes.TrimSpace(tree), bytes.TrimSpace(headTree)) {
		return headID, nil
	}
	commit, err := git(ctx, repo, identity, strings.NewReader("harness: the workspace, uncommitted files too\n"), "commit-tree", strings.TrimSpace(string(tree)), "-p", headID)
	if err != nil {
		return "", fmt.Errorf("worktree of %s: %w", repo, err)
	}
	return strings.TrimSpace(string(commit)), nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// InRepository reports whether dir seems to be in a git repository: it or
// a directory above it holds a .git. It runs nothing (a front end asks
// it as it starts); Create says for sure.
func InRepository(dir string) bool {
	d, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}
