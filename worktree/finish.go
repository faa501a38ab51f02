package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/safegit"
)

// Finish commits what the thread left in its worktree (its own commits
// stay) to the tree's branch, and removes the worktree — unless keep is
// set (the thread failed): then the worktree stays where it is, and
// Finished.Kept names it. The branch is never removed: it is the thread's
// result until it is applied (Apply) or a person deletes it. Finishing a
// tree that was finished before returns the same result.
func Finish(ctx context.Context, t Tree, name string, keep bool) (f Finished, err error) {
	f = Finished{Branch: t.Branch, Base: t.Base}
	defer func() {
		// A tree that could not be finished stays, named: nothing in it
		// is lost.
		if _, serr := os.Stat(t.Path); err != nil && serr == nil {
			f.Kept = t.Path
		}
	}()
	if _, err := os.Stat(t.Path); err == nil {
		// The worktree's git directory and work tree are named, not
		// found: its .git file is the thread's to rewrite.
		var at []string
		if t.GitDir != "" {
			at = []string{"GIT_DIR=" + t.GitDir, "GIT_WORK_TREE=" + t.Path}
		}
		if _, err := git(ctx, t.Path, append(at, identity...), nil, "add", "-A", "--", "."); err != nil {
			return f, fmt.Errorf("finish the worktree %s: %w", t.Path, err)
		}
		// Commit only when something is staged: diff --cached --quiet
		// exits 1 when there is.
		if _, err := git(ctx, t.Path, at, nil, "diff", "--cached", "--quiet"); err != nil {
			msg := "harness: what " + name + " left in its worktree\n"
			if _, err := git(ctx, t.Path, append(at, identity...), strings.NewReader(msg), "commit", "-q", "--no-verify", "-F", "-"); err != nil {
				return f, fmt.Errorf("finish the worktree %s: %w", t.Path, err)
			}
		}
	}
	head, err := safegit.Run(ctx, t.Repo, "rev-parse", "--verify", "refs/heads/"+t.Branch+"^{commit}")
	if err != nil {
		return f, fmt.Errorf("finish the worktree of %s: %w", name, err)
	}
	f.Head = strings.TrimSpace(string(head))
	if f.Changed, err = changed(ctx, t.Repo, t.Base, f.Head); err != nil {
		return f, err
	}
	if keep {
		if _, err := os.Stat(t.Path); err == nil {
			f.Kept = t.Path
		}
		return f, nil
	}
	return f, Remove(ctx, t)
}

// Remove removes t's worktree (and its bookkeeping), keeping its branch.
// A tree already removed is no error. The worktree's .git file is put
// back first (the thread could have rewritten it); a tree git will not
// remove (one holding a repository of its own) is removed from the disk,
// and git forgets it.
func Remove(ctx context.Context, t Tree) error {
	if _, err := os.Stat(t.Path); err == nil {
		if err := Relink(t); err != nil {
			return fmt.Errorf("remove the worktree %s: %w", t.Path, err)
		}
		if _, err := safegit.Run(ctx, t.Repo, "worktree", "remove", "--force", t.Path); err != nil {
			if rerr := os.RemoveAll(t.Path); rerr != nil {
				return fmt.Errorf("remove the worktree %s: %w (and %w)", t.Path, err, rerr)
			}
		}
	}
	_ = os.Remove(t.Path + ".base")
	_, err := safegit.Run(ctx, t.Repo, "worktree", "prune")
	return err
}

// Relink puts back t's .git file, naming t's own git directory: the
// thread that works in t could have rewritten it to lead git elsewhere
// (a repository it made, with a config of its own). A tree that records
// no git directory is left as it is.
func Relink(t Tree) error {
	if t.GitDir == "" {
		return nil
	}
	dotgit := filepath.Join(t.Path, ".git")
	if err := os.RemoveAll(dotgit); err != nil {
		return err
	}
	return os.WriteFile(dotgit, []byte("gitdir: "+t.GitDir+"\n"), 0o600)
}

// changed lists the files that differ between two commits.
func changed(ctx context.Context, repo, from, to string) ([]string, error) {
	out, err := safegit.Run(ctx, repo, "diff", "--name-only", "-z", "--no-renames", from, to, "--")
	if err != nil {
		return nil, fmt.Errorf("what changed from %.12s to %.12s: %w", from, to, err)
	}
	var files []string
	for p := range bytes.SplitSeq(out, []byte{0}) {
		if len(p) > 0 {
			files = append(files, string(p))
		}
	}
	slices.Sort(files)
	return files, nil
}

// check refuses a branch this package did not make, a base that is not
// its ancestor, or — when want is set — a branch whose head is not want
// (ErrMoved): what a model names is untrusted, and a person approves the
// change as it was when shown.
func check(ctx context.Context, repo, branch, base, want string) (string, error) {
	if !strings.HasPrefix(branch, branchPrefix) || Branch(strings.TrimPrefix(branch, branchPrefix)) != branch {
		return "", fmt.Errorf("branch %q: %w (a thread's branch begins %q)", branch, ErrBranch, branchPrefix)
	}
	if !commitID(base) {
		return "", fmt.Errorf("base %q: %w (a base is a full commit id)", base, ErrBranch)
	}
	if want != "" && !commitID(want) {
		return "", fmt.Errorf("head %q: %w (a head is a full commit id)", want, ErrBranch)
	}
	head, err := safegit.Run(ctx, repo, "rev-parse", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("branch %q: %w: %w", branch, ErrBranch, err)
	}
	if _, err := safegit.Run(ctx, repo, "merge-base", "--is-ancestor", base, "refs/heads/"+branch); err != nil {
		return "", fmt.Errorf("branch %q does not descend from %.12s: %w", branch, base, ErrBranch)
	}
	now := strings.TrimSpace(string(head))
	if want != "" && now != want {
		return "", fmt.Errorf("branch %s is at %.12s, not %.12s: %w", branch, now, want, ErrMoved)
	}
	return now, nil
}

// commitID reports whether s is a full hexadecimal object id.
func commitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// Diff is the change the branch made since base, as a unified diff of
// text (binary files named, not shown), for a person to read. A head
// other than "" must be the branch's head (else ErrMoved): the diff is
// then exactly what Apply with that head would bring in.
func Diff(ctx context.Context, workspace, branch, base, head string) (string, error) {
	repo, err := top(ctx, workspace)
	if err != nil {
		return "", err
	}
	head, err = check(ctx, repo, branch, base, head)
	if err != nil {
		return "", err
	}
	out, err := safegit.Run(ctx, repo, "diff", "--no-color", "--no-renames", base, head, "--")
	if err != nil {
		return "", fmt.Errorf("diff of %s: %w", branch, err)
	}
	return string(out), nil
}

// Applied is what Apply brought into the workspace.
type Applied struct {
	Head    string
	Changed []string
}

// Apply brings the change the branch made from base to head into the
// workspace's files (not its index, nor HEAD): all of it, or — when any
// part of it conflicts with the workspace as it is now — nothing, and an
// error matching ErrConflict that names the files. A workspace that
// changed since base (another thread's merge, a person's edit) is merged
// with the branch three ways, base being their common ancestor: changes
// on both sides that do not overlap are both kept, and only changes to
// the same lines of a file conflict (see merge). head is the commit a
// person was shown (Diff): a branch that moved since is ErrMoved, and
// nothing is applied; "" takes the branch's head as it is (for a caller
// that shows nobody the change). The branch stays either way.
//
// may, when not nil, is asked about each file the change touches, by its
// slash-separated path relative to the workspace, before anything is
// applied: an error refuses the whole change (the caller's file tools
// refuse what they keep: hooks directories, included configs, …).
func Apply(ctx context.Context, workspace, branch, base, head string, may func(rel string) error) (Applied, error) {
	repo, err := top(ctx, workspace)
	if err != nil {
		return Applied{}, err
	}
	head, err = check(ctx, repo, branch, base, head)
	if err != nil {
		return Applied{}, err
	}
	files, err := changed(ctx, repo, base, head)
	if err != nil {
		return Applied{}, err
	}
	a := Applied{Head: head, Changed: files}
	if err := writable(workspace, repo, files, may); err != nil {
		return a, fmt.Errorf("apply %s: %w", branch, err)
	}
	if len(files) == 0 {
		return a, nil
	}
	patch, err := merge(ctx, repo, branch, base, head, files)
	var ce *ConflictError
	if errors.As(err, &ce) {
		ce.Branch = branch
		return a, ce
	}
	if err != nil {
		return a, fmt.Errorf("apply %s: %w", branch, err)
	}
	if len(patch) == 0 {
		return a, nil // the workspace has the change already
	}
	// The patch is from the workspace's files as merge just read them:
	// it applies unless they changed since (a command running beside),
	// and then not at all.
	if _, err := git(ctx, repo, nil, bytes.NewReader(patch), "apply", "--check", "-"); err != nil {
		return a, &ConflictError{Branch: branch, Paths: conflicting(err, files), Err: err}
	}
	if _, err := git(ctx, repo, nil, bytes.NewReader(patch), "apply", "-"); err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return a, ctx.Err()
		}
		return a, &ConflictError{Branch: branch, Paths: conflicting(err, files), Err: err}
	}
	return a, nil
}

// conflicting are the files of files (the branch's) that git's refusal
// to apply names: "error: patch failed: PATH:LINE", "error: PATH: patch
// does not apply", "error: PATH: already exists in working directory",
// "error: PATH: No such file or directory", "error: 'PATH' is beyond a
// symbolic link" and the like.
func conflicting(err error, files []string) []string {
	var out []string
	msg := err.Error()
	for _, f := range files {
		if strings.Contains(msg, "error: "+f+": ") || strings.Contains(msg, "error: patch failed: "+f+":") ||
			strings.Contains(msg, "error: '"+f+"' ") {
			out = append(out, f)
		}
	}
	return out
}

// writable refuses files (relative to the repository's top) that the file
// tools would not write: one outside the workspace, or with a .harness or
// .git component (ErrProtected), or one may refuses (its error wrapped in
// ErrProtected).
func writable(workspace, repo string, files []string, may func(rel string) error) error {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	top := repo
	if r, err := filepath.EvalSymlinks(repo); err == nil {
		top = r
	}
	for _, f := range files {
		p := filepath.Join(top, filepath.FromSlash(f))
		rel, err := filepath.Rel(ws, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return fmt.Errorf("%s is outside the workspace %s: %w", f, ws, ErrProtected)
		}
		for part := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
			if part == ".harness" || part == ".git" {
				return fmt.Errorf("%s: %w", f, ErrProtected)
			}
		}
		if may == nil {
			continue
		}
		if err := may(filepath.ToSlash(rel)); err != nil {
			return fmt.Errorf("%w: %w", ErrProtected, err)
		}
	}
	return nil
}
