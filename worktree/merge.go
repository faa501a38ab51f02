package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/safegit"
)

// merge is the three-way merge of the branch's change from base to head
// with the workspace as it is now, as a patch that brings the
// workspace's files to the merged result: empty when they are there
// already. Only files the branch changes (files, relative to the
// repository's top) are read from the workspace — every other file is
// the workspace's and stays as it is — so "the workspace now" is base
// with those files as the workspace has them, a commit whose parent is
// base (the merge base git finds is then base). Changes on both sides
// that do not overlap are both kept; where they do, the merge fails
// with a ConflictError naming the files, and nothing is written.
func merge(ctx context.Context, repo, branch, base, head string, files []string) ([]byte, error) {
	now, err := workspaceCommit(ctx, repo, base, files)
	if err != nil {
		return nil, err
	}
	if now == base {
		// The workspace has base's version of every file the branch
		// changes: the merge is the branch's change as it is.
		return safegit.Run(ctx, repo, "diff", "--binary", "--full-index", "--no-renames", base, head, "--")
	}
	cmd, err := safegit.CommandEnv(ctx, repo, nil, "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", now, head)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		// Conflicts: the merged tree's id, then the conflicted paths.
		parts := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
		var paths []string
		for _, p := range parts[min(1, len(parts)):] {
			if p != "" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		slices.Sort(paths)
		return nil, &ConflictError{Branch: branch, Paths: paths, Err: fmt.Errorf("git merge-tree: %d of the branch's files changed in the workspace too, where the branch changed them", len(paths))}
	case err != nil:
		return nil, fmt.Errorf("merge %s: git merge-tree: %w: %s", branch, err, bounded(stderr.String()))
	}
	tree, _, _ := strings.Cut(string(out), "\x00")
	tree = strings.TrimSpace(tree)
	if !commitID(tree) {
		return nil, fmt.Errorf("merge %s: git merge-tree gave %q, no tree", branch, bounded(tree))
	}
	// The merge writes only the branch's files: every other path of the
	// workspace's commit is base's, which the branch does not change.
	touched, err := changed(ctx, repo, now, tree)
	if err != nil {
		return nil, err
	}
	for _, f := range touched {
		if !slices.Contains(files, f) {
			return nil, fmt.Errorf("merge %s: the merge changes %s, which the branch does not: %w", branch, f, ErrConflict)
		}
	}
	return safegit.Run(ctx, repo, "diff", "--binary", "--full-index", "--no-renames", now, tree, "--")
}

// workspaceCommit is a commit of base with files (relative to the
// repository's top) as the workspace has them now — changed, added
// (ignored or not) or gone — and base as its parent; base itself when
// they are as base has them. It is made through an index of its own,
// outside the workspace; symlinks are taken as links, never followed.
func workspaceCommit(ctx context.Context, repo, base string, files []string) (string, error) {
	dir, err := os.MkdirTemp("", "harness-merge-")
	if err != nil {
		return "", fmt.Errorf("merge: %w", err)
	}
	defer os.RemoveAll(dir)
	env := append([]string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}, identity...)
	if _, err := git(ctx, repo, env, nil, "read-tree", base); err != nil {
		return "", fmt.Errorf("merge: %w", err)
	}
	var list bytes.Buffer
	for _, f := range files {
		list.WriteString(f)
		list.WriteByte(0)
	}
	if _, err := git(ctx, repo, env, &list, "update-index", "--add", "--remove", "-z", "--stdin"); err != nil {
		// A file the workspace holds as something git cannot take in
		// its place (a directory where the branch has a file).
		return "", &ConflictError{Paths: conflicting(err, files), Err: err}
	}
	tree, err := git(ctx, repo, env, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("merge: %w", err)
	}
	baseTree, err := safegit.Run(ctx, repo, "rev-parse", base+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("merge: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(tree), bytes.TrimSpace(baseTree)) {
		return base, nil
	}
	commit, err := git(ctx, repo, identity, strings.NewReader("harness: the workspace, to merge into\n"), "commit-tree", strings.TrimSpace(string(tree)), "-p", base)
	if err != nil {
		return "", fmt.Errorf("merge: %w", err)
	}
	return strings.TrimSpace(string(commit)), nil
}

// bounded is what git said, cut to a length a message holds.
func bounded(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}
