package action

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// sum is the hex SHA-256 of s.
func sum(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

// put writes content to root/rel with mode perm, making parents.
func put(t testing.TB, root, rel, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), perm))
	require.NoError(t, os.Chmod(p, perm)) // WriteFile keeps an existing file's mode
}

// symlink makes root/rel a link to target.
func symlink(t testing.TB, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.Symlink(target, p))
}

// settled returns a workspace whose observations happen, as far as the
// racy rule can tell, an hour from now: every file on disk is older than the
// snapshot time, so every file read is remembered.
func (m testMode) settled(t testing.TB, root string, opts ...WorkspaceOption) *Workspace {
	t.Helper()
	w, err := m.newWorkspace(t, root, opts...)
	require.NoError(t, err)
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	return w
}

// reads counts the files a workspace reads, by path.
type reads struct {
	mu    sync.Mutex
	paths []string
}

func countReads(w *Workspace) *reads {
	r := &reads{}
	w.before = func(op, rel string) error {
		if op != "read" {
			return nil
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.paths = append(r.paths, rel)
		return nil
	}
	return r
}

// take returns the paths read since the last take, sorted.
func (r *reads) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.paths
	r.paths = nil
	sort.Strings(p)
	if p == nil {
		p = []string{}
	}
	return p
}

// remembered returns the entry the workspace remembers at rel, or nil.
func remembered(w *Workspace, rel string) *entry {
	r := w.tree
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if r == nil {
			return nil
		}
		j := r.find(p)
		if j < 0 {
			return nil
		}
		if i == len(parts)-1 {
			return &r.ents[j]
		}
		r = r.ents[j].dir
	}
	return nil
}

func paths(s Snapshot) []string {
	out := []string{}
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

func file(s Snapshot, p string) (FileState, bool) {
	for _, f := range s.Files {
		if f.Path == p {
			return f, true
		}
	}
	return FileState{}, false
}

// What a .git or a .harness holds is observed, but for git's working data
// and the store's own files (guard.go).
func TestWorkspaceListsFilesAndLinksAndGuardedMetadata(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		outside := t.TempDir()
		put(t, outside, "secret.txt", "outside the root", 0o644)

		put(t, root, "README.md", "hello\n", 0o644)
		put(t, root, "bin/run.sh", "#!/bin/sh\n", 0o755)
		put(t, root, "a.txt", "a", 0o644)
		put(t, root, "a/b.txt", "b", 0o644) // "a.txt" < "a/b.txt" in byte order
		put(t, root, ".gitignore", "*.log\n", 0o644)
		put(t, root, "ignored.log", "an ignored file is still content\n", 0o644)
		// git's working data: not observed.
		for _, p := range []string{".git/HEAD", ".git/ORIG_HEAD", ".git/index", ".git/index.lock", ".git/packed-refs",
			".git/COMMIT_EDITMSG", ".git/objects/aa/bb", ".git/refs/heads/main", ".git/logs/HEAD", ".git/BISECT_LOG",
			".git/modules/m/HEAD", ".git/modules/m/objects/pack/p.pack", ".git/modules/m/refs/heads/main",
			".git/worktrees/w/index", ".git/hooks/pre-commit.lock", "vendor/lib/.git/index", "vendor/lib/.git/objects/x"} {
			put(t, root, p, "data", 0o644)
		}
		// What can make git run a program, or send it elsewhere: observed.
		put(t, root, ".git/config", "[core]\n", 0o644)
		put(t, root, ".git/hooks/pre-commit", "#!/bin/sh\n", 0o755)
		put(t, root, ".git/info/attributes", "* filter=x\n", 0o644)
		put(t, root, ".git/commondir", "../elsewhere\n", 0o644)
		put(t, root, ".git/rebase-merge/git-rebase-todo", "exec sh\n", 0o644)
		put(t, root, ".git/modules/m/config", "[core]\n", 0o644)
		put(t, root, ".git/modules/m/hooks/post-checkout", "#!/bin/sh\n", 0o755)
		put(t, root, ".git/modules/a/objects/config", "a submodule named a/objects\n", 0o644)
		put(t, root, ".git/worktrees/w/commondir", "../..\n", 0o644)
		put(t, root, "vendor/lib/.git/config", "nested repository metadata", 0o644)
		put(t, root, "vendor/lib/.git/HEAD", "ref: refs/heads/main\n", 0o644) // a nested repository's HEAD: observed
		put(t, root, "vendor/lib/lib.go", "package lib\n", 0o644)
		put(t, root, "worktree/.git", "gitdir: /elsewhere\n", 0o644)
		put(t, root, "worktree/main.go", "package main\n", 0o644)
		// The store's own files: not observed; anything else in a .harness is.
		put(t, root, ".harness/db/000001.log", "the store", 0o644)
		put(t, root, ".harness/project.json", "{}", 0o644)
		put(t, root, "docs/.harness", "a .harness that is a file", 0o644)
		put(t, root, "sub/.harness/db/000001.log", "a nested store", 0o644)
		put(t, root, "sub/.harness/config.json", "{}", 0o644)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "empty/dir"), 0o755))
		symlink(t, root, "link-in", "README.md")
		symlink(t, root, "link-out", filepath.Join(outside, "secret.txt"))
		symlink(t, root, "link-dir", outside)
		symlink(t, root, "link-dangling", "does/not/exist")

		s := observe(t, m.settled(t, root))
		require.Equal(t, []string{
			".git/commondir", ".git/config", ".git/hooks/pre-commit", ".git/info/attributes",
			".git/modules/a/objects/config", ".git/modules/m/config", ".git/modules/m/hooks/post-checkout",
			".git/rebase-merge/git-rebase-todo", ".git/worktrees/w/commondir",
			".gitignore", ".harness/project.json", "README.md", "a.txt", "a/b.txt", "bin/run.sh",
			"docs/.harness", "ignored.log", "link-dangling", "link-dir", "link-in", "link-out",
			"sub/.harness/config.json", "vendor/lib/.git/HEAD", "vendor/lib/.git/config", "vendor/lib/lib.go", "worktree/.git", "worktree/main.go",
		}, paths(s))

		readme, _ := file(s, "README.md")
		require.Equal(t, FileState{Path: "README.md", Digest: sum("hello\n"), Mode: 0o644, Size: 6}, readme)
		run, _ := file(s, "bin/run.sh")
		require.Equal(t, os.FileMode(0o755), run.Mode)

		for _, c := range []struct{ path, target string }{
			{"link-in", "README.md"},
			{"link-out", filepath.Join(outside, "secret.txt")},
			{"link-dir", outside},
			{"link-dangling", "does/not/exist"},
		} {
			f, ok := file(s, c.path)
			require.True(t, ok, c.path)
			require.Equal(t, c.target, f.Link, c.path)
			require.Equal(t, sum(c.target), f.Digest, "%s: the digest is of the target string, the link is not followed", c.path)
			require.NotZero(t, f.Mode&fs.ModeSymlink, c.path)
			require.Equal(t, int64(len(c.target)), f.Size, c.path)
		}
		for _, p := range paths(s) {
			require.NotContains(t, p, "secret", "nothing is read through a link")
		}
	})
}

// TestWorkspaceHashLayout: the hash is the documented hash tree, by hand.
func TestWorkspaceHashLayout(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "b/x", "x", 0o644)
		put(t, root, "a", "a", 0o755)
		put(t, root, "a.b", "ab", 0o644) // after "a", before "b": name order, not path order
		symlink(t, root, "c", "b/x")
		require.NoError(t, os.Mkdir(filepath.Join(root, "empty"), 0o755))

		dir := func(rows ...string) string { return sum(strings.Join(rows, "")) }
		top := func(d string) string { return sum("harness.workspace.v3\x00" + d) }
		b := dir(fmt.Sprintf("f %s x\x00", sum("x")))
		want := top(dir(
			fmt.Sprintf("x %s a\x00", sum("a")),
			fmt.Sprintf("f %s a.b\x00", sum("ab")),
			fmt.Sprintf("d %s b\x00", b),
			fmt.Sprintf("l %s c\x00", sum("b/x")),
		))
		s := observe(t, m.settled(t, root))
		require.Equal(t, want, s.Hash)
		require.Equal(t, want, hashFiles(s.Files), "a listing hashes as the reading does")

		empty := observe(t, m.settled(t, t.TempDir()))
		require.Equal(t, top(sum("")), empty.Hash)
		require.Empty(t, empty.Files)

		// git's working data is out of scope; what else is in a .git counts.
		repo := t.TempDir()
		put(t, repo, "a", "a", 0o644)
		put(t, repo, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
		require.Equal(t, top(dir(fmt.Sprintf("f %s a\x00", sum("a")))), observe(t, m.settled(t, repo)).Hash)
		put(t, repo, ".git/config", "[core]\n", 0o644)
		git := dir(fmt.Sprintf("f %s config\x00", sum("[core]\n")))
		require.Equal(t, top(dir(fmt.Sprintf("d %s .git\x00", git), fmt.Sprintf("f %s a\x00", sum("a")))),
			observe(t, m.settled(t, repo)).Hash)
	})
}

func TestWorkspaceHashIsDeterministic(t *testing.T) {
	mk := func(root string) {
		for i := range 700 { // more than one chunk in one directory
			put(t, root, fmt.Sprintf("flat/f%03d", i), fmt.Sprint(i), 0o644)
		}
		for i := range 50 {
			put(t, root, fmt.Sprintf("d%d/e%d/f", i%7, i), strings.Repeat("z", i), 0o644)
		}
		symlink(t, root, "l", "flat/f001")
	}
	r1, r2 := t.TempDir(), t.TempDir()
	mk(r1)
	mk(r2)
	forModes(t, func(t *testing.T, m testMode) {
		w1, err := m.newWorkspace(t, r1)
		require.NoError(t, err)
		w2, err := m.newWorkspace(t, r1)
		require.NoError(t, err)
		s1, s2 := observe(t, w1), observe(t, w2)
		require.Equal(t, s1, s2, "two workspace values over one tree")
		require.Equal(t, s1, observe(t, w1), "one workspace observed twice")
		require.Equal(t, s1.Hash, observe(t, m.settled(t, r2)).Hash, "an identical tree elsewhere")
		require.Len(t, s1.Files, 751)
	})
}

func TestWorkspaceSeesChanges(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		cases := []struct {
			name   string
			setup  func(t *testing.T, root string)
			change func(t *testing.T, root string)
			want   []facts.PathChange
		}{
			{
				name:   "added",
				change: func(t *testing.T, root string) { put(t, root, "new/file.go", "package x\n", 0o644) },
				want:   []facts.PathChange{{Path: "new/file.go", After: sum("package x\n"), AfterMode: 0o644}},
			},
			{
				name:   "removed",
				setup:  func(t *testing.T, root string) { put(t, root, "old.txt", "old", 0o644) },
				change: func(t *testing.T, root string) { require.NoError(t, os.Remove(filepath.Join(root, "old.txt"))) },
				want:   []facts.PathChange{{Path: "old.txt", Before: sum("old"), BeforeMode: 0o644}},
			},
			{
				name:   "modified, same size",
				setup:  func(t *testing.T, root string) { put(t, root, "cache.toml", "ttl_seconds = 100", 0o644) },
				change: func(t *testing.T, root string) { put(t, root, "cache.toml", "ttl_seconds = 300", 0o644) },
				want:   []facts.PathChange{{Path: "cache.toml", Before: sum("ttl_seconds = 100"), After: sum("ttl_seconds = 300"), BeforeMode: 0o644, AfterMode: 0o644}},
			},
			{
				name:   "executable bit set: modified, digests equal",
				setup:  func(t *testing.T, root string) { put(t, root, "run.sh", "echo", 0o644) },
				change: func(t *testing.T, root string) { require.NoError(t, os.Chmod(filepath.Join(root, "run.sh"), 0o755)) },
				want:   []facts.PathChange{{Path: "run.sh", Before: sum("echo"), After: sum("echo"), BeforeMode: 0o644, AfterMode: 0o755}},
			},
			{
				name:  "symlink retargeted",
				setup: func(t *testing.T, root string) { symlink(t, root, "current", "v1") },
				change: func(t *testing.T, root string) {
					require.NoError(t, os.Remove(filepath.Join(root, "current")))
					symlink(t, root, "current", "v2")
				},
				want: []facts.PathChange{{Path: "current", Before: sum("v1"), After: sum("v2")}},
			},
			{
				name:  "file replaced by a symlink",
				setup: func(t *testing.T, root string) { put(t, root, "conf", "target", 0o644) },
				change: func(t *testing.T, root string) {
					require.NoError(t, os.Remove(filepath.Join(root, "conf")))
					symlink(t, root, "conf", "target")
				},
				want: []facts.PathChange{{Path: "conf", Before: sum("target"), After: sum("target"), BeforeMode: 0o644}},
			},
			{
				name: "git's working data and the store's own files change: nothing observed",
				setup: func(t *testing.T, root string) {
					put(t, root, ".git/index", "1", 0o644)
					put(t, root, ".git/refs/heads/main", "1", 0o644)
					put(t, root, ".harness/db/000001.log", "1", 0o644)
				},
				change: func(t *testing.T, root string) {
					put(t, root, ".git/index", "2", 0o644)
					put(t, root, ".git/refs/heads/main", "2", 0o644)
					put(t, root, ".git/index.lock", "2", 0o644)
					put(t, root, ".harness/db/000001.log", "2", 0o644)
				},
			},
			{
				name:  "a commondir planted in .git: observed",
				setup: func(t *testing.T, root string) { put(t, root, ".git/HEAD", "ref: refs/heads/main\n", 0o644) },
				change: func(t *testing.T, root string) {
					put(t, root, ".git/commondir", "../evil", 0o644)
				},
				want: []facts.PathChange{{Path: ".git/commondir", After: sum("../evil"), AfterMode: 0o644}},
			},
			{
				// git follows a .git link; the observer does not, and what it
				// leads to is workspace content: a hook and git's working
				// data there are both observed, nothing left out.
				name: "a hook and an object written through a .git link: observed",
				setup: func(t *testing.T, root string) {
					put(t, root, "meta/HEAD", "ref: refs/heads/main\n", 0o644)
					symlink(t, root, ".git", "meta")
				},
				change: func(t *testing.T, root string) {
					put(t, root, ".git/hooks/pre-commit", "touch PWNED", 0o755)
					put(t, root, ".git/objects/ab/cd", "o", 0o644)
				},
				want: []facts.PathChange{
					{Path: "meta/hooks/pre-commit", After: sum("touch PWNED"), AfterMode: 0o755},
					{Path: "meta/objects/ab/cd", After: sum("o"), AfterMode: 0o644},
				},
			},
			{
				name:  "a settings file created in .harness: observed",
				setup: func(t *testing.T, root string) { put(t, root, ".harness/db/000001.log", "1", 0o644) },
				change: func(t *testing.T, root string) {
					put(t, root, ".harness/project.json", `{"approve":"all"}`, 0o644)
				},
				want: []facts.PathChange{{Path: ".harness/project.json", After: sum(`{"approve":"all"}`), AfterMode: 0o644}},
			},
			{
				name:   "other permission bits: nothing observed",
				setup:  func(t *testing.T, root string) { put(t, root, "private", "p", 0o644) },
				change: func(t *testing.T, root string) { require.NoError(t, os.Chmod(filepath.Join(root, "private"), 0o600)) },
			},
			{
				name:  "an empty directory appears: nothing observed",
				setup: func(t *testing.T, root string) {},
				change: func(t *testing.T, root string) {
					require.NoError(t, os.MkdirAll(filepath.Join(root, "empty"), 0o755))
				},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				root := t.TempDir()
				put(t, root, "keep.txt", "unchanged", 0o644)
				if c.setup != nil {
					c.setup(t, root)
				}
				w, err := m.newWorkspace(t, root) // the real clock: the changes are racily clean
				require.NoError(t, err)
				before := observe(t, w)
				c.change(t, root)
				after := observe(t, w)
				require.Equal(t, c.want, Diff(before, after))
				require.Equal(t, len(c.want) == 0, before.Hash == after.Hash, "the hash changes exactly when the inventory is not empty")
			})
		}
	})
}

func TestWorkspaceCountsChangedUntrackedFiles(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
		root := t.TempDir()
		put(t, root, "tracked.go", "package x\n", 0o644)
		git(t, root, "init", "-q")
		git(t, root, "add", "tracked.go")
		git(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
		put(t, root, "scratch.txt", "draft 1", 0o644)

		w, err := m.newWorkspace(t, root)
		require.NoError(t, err)
		before := observe(t, w)
		head := git(t, root, "rev-parse", "HEAD")
		put(t, root, "scratch.txt", "draft 2", 0o644)
		after := observe(t, w)

		require.Equal(t, head, git(t, root, "rev-parse", "HEAD"), "git's identity did not move")
		require.NotEqual(t, before.Hash, after.Hash)
		require.Equal(t, []facts.PathChange{{Path: "scratch.txt", Before: sum("draft 1"), After: sum("draft 2"), BeforeMode: 0o644, AfterMode: 0o644}}, Diff(before, after))
	})
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func TestWorkspaceStatCacheSparesUnchangedFiles(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		for i := range 20 {
			put(t, root, fmt.Sprintf("d%d/f%d.txt", i%3, i), fmt.Sprint("content ", i), 0o644)
		}
		symlink(t, root, "link", "d0/f0.txt")
		w := m.settled(t, root)
		r := countReads(w)

		first := observe(t, w)
		require.Len(t, r.take(), 20, "the first observation reads every file")
		require.Equal(t, first, observe(t, w))
		require.Equal(t, []string{}, r.take(), "nothing changed: nothing is read")

		put(t, root, "d1/f4.txt", "content 4, longer now", 0o644)
		require.NoError(t, os.Chmod(filepath.Join(root, "d2/f5.txt"), 0o755))
		third := observe(t, w)
		require.Equal(t, []string{"d1/f4.txt", "d2/f5.txt"}, r.take(), "only the files whose stat changed are read")
		f4, _ := file(third, "d1/f4.txt")
		require.Equal(t, sum("content 4, longer now"), f4.Digest)

		require.NoError(t, os.Remove(filepath.Join(root, "d0/f0.txt")))
		fourth := observe(t, w)
		require.Equal(t, []string{}, r.take())
		require.Len(t, fourth.Files, 20)
		require.Nil(t, remembered(w, "d0/f0.txt"), "a removed file leaves the cache")
	})
}

// TestWorkspaceTrustsTheStatCache shows that the digest of a file whose stat
// record is unchanged comes from the cache, not from the disk: a cached
// digest planted by the test is reported as is. Content the stat record
// cannot see is, by design, not seen — which is why racily clean entries
// are never cached.
func TestWorkspaceTrustsTheStatCache(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "f", "real", 0o644)
		w := m.settled(t, root)
		observe(t, w)
		plant(t, w, "f", sum("planted"))

		s := observe(t, w)
		f, _ := file(s, "f")
		require.Equal(t, sum("planted"), f.Digest)
	})
}

func TestWorkspaceRereadsRacilyCleanFiles(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "older", "1", 0o644)
		put(t, root, "same-tick", "2", 0o644)
		put(t, root, "newer", "3", 0o644)

		w, err := m.newWorkspace(t, root, WithRacyWindow(0))
		require.NoError(t, err)
		snap := time.Now().Add(time.Hour).Truncate(time.Second) // later than every ctime
		w.now = func() time.Time { return snap }
		r := countReads(w)
		chtime := func(rel string, mtime time.Time) {
			require.NoError(t, os.Chtimes(filepath.Join(root, rel), mtime, mtime))
		}
		chtime("older", snap.Add(-time.Nanosecond))
		chtime("same-tick", snap)
		chtime("newer", snap.Add(time.Second))

		observe(t, w)
		require.Equal(t, []string{"newer", "older", "same-tick"}, r.take())
		observe(t, w)
		require.Equal(t, []string{"newer", "same-tick"}, r.take(),
			"a file whose mtime is not strictly older than the snapshot time it was read at is read again")

		snap = snap.Add(time.Second) // "same-tick" is now strictly older; "newer" is in this tick
		observe(t, w)
		require.Equal(t, []string{"newer", "same-tick"}, r.take(), "read again: the last reading was racy")
		observe(t, w)
		require.Equal(t, []string{"newer"}, r.take(), "same-tick is clean now; newer is still not strictly older")

		snap = snap.Add(time.Nanosecond)
		observe(t, w)
		require.Equal(t, []string{"newer"}, r.take(), "read again: the last reading was racy")
		observe(t, w)
		require.Equal(t, []string{}, r.take(), "read at a later snapshot time: clean now")
	})
}

// TestWorkspaceCatchesSameTickRewrites is the case the racy rule exists
// for, with the real clock: a file rewritten right after it was observed,
// with the same size and the same mtime, is still seen to change.
func TestWorkspaceCatchesSameTickRewrites(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "f", "aaaa", 0o644)
		p := filepath.Join(root, "f")
		fi, err := os.Stat(p)
		require.NoError(t, err)
		w, err := m.newWorkspace(t, root)
		require.NoError(t, err)
		before := observe(t, w)

		require.NoError(t, os.WriteFile(p, []byte("bbbb"), 0o644))
		require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		after := observe(t, w)
		require.Equal(t, []facts.PathChange{{Path: "f", Before: sum("aaaa"), After: sum("bbbb"), BeforeMode: 0o644, AfterMode: 0o644}}, Diff(before, after))
	})
}

// memBlobs is a Blobs in a map.
type memBlobs struct {
	mu   sync.Mutex
	m    map[string][]byte
	puts int
}

func (b *memBlobs) PutBlob(_ context.Context, data []byte) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.puts++
	d := sum(string(data))
	if _, ok := b.m[d]; !ok {
		b.m[d] = bytes.Clone(data)
	}
	return d, nil
}

func (b *memBlobs) GetBlob(_ context.Context, digest string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.m[digest]
	if !ok {
		return nil, ErrNoBlob
	}
	return data, nil
}

func TestWorkspaceKeepsBlobs(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		ctx := context.Background()
		const limit = 1000
		root := t.TempDir()
		put(t, root, "a", "shared", 0o644)
		put(t, root, "b", "shared", 0o644)
		put(t, root, "empty", "", 0o644)
		put(t, root, "at-cap", strings.Repeat("c", limit), 0o644)
		put(t, root, "over-cap", strings.Repeat("o", limit+1), 0o644)
		symlink(t, root, "link", "a")
		blobs := &memBlobs{m: map[string][]byte{}}
		w := m.settled(t, root, WithBlobs(blobs, limit))

		before := observe(t, w)
		require.Equal(t, 4, blobs.puts, "a, b, empty and at-cap are read and kept")
		require.Len(t, blobs.m, 3, "a and b share one blob")
		for _, p := range []string{"a", "b", "empty", "at-cap"} {
			f, _ := file(before, p)
			data, err := blobs.GetBlob(ctx, f.Digest)
			require.NoError(t, err, p)
			content, err := os.ReadFile(filepath.Join(root, p))
			require.NoError(t, err)
			require.Equal(t, content, data, p)
		}
		over, _ := file(before, "over-cap")
		require.Equal(t, sum(strings.Repeat("o", limit+1)), over.Digest, "a file over the cap is still digested")
		_, err := blobs.GetBlob(ctx, over.Digest)
		require.ErrorIs(t, err, ErrNoBlob, "but its bytes are not kept")

		observe(t, w)
		require.Equal(t, 4, blobs.puts, "files the stat cache spares are not stored again")

		// A shell command changes a file: the diff's digests fetch both sides.
		sh, err := exec.LookPath("sh")
		if err != nil {
			put(t, root, "a", "changed\n", 0o644)
		} else {
			cmd := exec.Command(sh, "-c", "echo changed > a")
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
		after := observe(t, w)
		changes := Diff(before, after)
		require.Equal(t, []facts.PathChange{{Path: "a", Before: sum("shared"), After: sum("changed\n"), BeforeMode: 0o644, AfterMode: 0o644}}, changes)
		old, err := blobs.GetBlob(ctx, changes[0].Before)
		require.NoError(t, err)
		require.Equal(t, "shared", string(old))
		now, err := blobs.GetBlob(ctx, changes[0].After)
		require.NoError(t, err)
		require.Equal(t, "changed\n", string(now))
	})
}

func TestWorkspaceBlobCapDefault(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "at", strings.Repeat("a", int(DefaultBlobCap)), 0o644)
		put(t, root, "over", strings.Repeat("o", int(DefaultBlobCap)+1), 0o644)
		blobs := &memBlobs{m: map[string][]byte{}}
		observe(t, m.settled(t, root, WithBlobs(blobs, 0)))
		require.Len(t, blobs.m, 1)
		require.Contains(t, blobs.m, sum(strings.Repeat("a", int(DefaultBlobCap))))
	})
}

// lyingBlobs returns a wrong digest.
type lyingBlobs struct{ memBlobs }

func (b *lyingBlobs) PutBlob(context.Context, []byte) (string, error) { return sum("other"), nil }

func TestWorkspaceRefusesABlobStoreThatMisfiles(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "f", "x", 0o644)
		_, err := m.settled(t, root, WithBlobs(&lyingBlobs{}, 0)).Observe(context.Background())
		require.ErrorContains(t, err, "f")
		require.ErrorContains(t, err, "returned digest")
	})
}

func TestWorkspaceFileVanishingBeforeItIsRead(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "stays", "s", 0o644)
		put(t, root, "goes", "g", 0o644)
		w := m.settled(t, root)
		w.before = func(_, rel string) error {
			if rel == "goes" {
				require.NoError(t, os.Remove(filepath.Join(root, "goes")))
			}
			return nil
		}
		s := observe(t, w)
		require.Equal(t, []string{"stays"}, paths(s), "a file that vanished is just not there")
	})
}

func TestWorkspaceFileReplacedByALinkBeforeItIsRead(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root, outside := t.TempDir(), t.TempDir()
		put(t, outside, "secret", "outside", 0o644)
		put(t, root, "f", "inside", 0o644)
		w := m.settled(t, root)
		w.before = func(_, rel string) error {
			if rel == "f" {
				p := filepath.Join(root, "f")
				require.NoError(t, os.Remove(p))
				require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), p))
			}
			return nil
		}
		s := observe(t, w)
		f, ok := file(s, "f")
		require.True(t, ok)
		require.Equal(t, filepath.Join(outside, "secret"), f.Link, "the path is looked at again and recorded as the link it now is")
		require.NotEqual(t, sum("outside"), f.Digest, "the link is not followed")
	})
}

func TestWorkspaceDirectoryReplacedByALinkBeforeItIsListed(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root, outside := t.TempDir(), t.TempDir()
		put(t, outside, "secret", "outside", 0o644)
		put(t, root, "sub/f", "inside", 0o644)
		w := m.settled(t, root)
		w.before = func(op, rel string) error {
			if op == "list" && rel == "sub" {
				p := filepath.Join(root, "sub")
				require.NoError(t, os.RemoveAll(p))
				require.NoError(t, os.Symlink(outside, p))
			}
			return nil
		}
		s := observe(t, w)
		require.Equal(t, []string{"sub"}, paths(s), "nothing is listed through the link")
		f, _ := file(s, "sub")
		require.Equal(t, outside, f.Link)
	})
}

func TestWorkspaceDirectoryVanishingBeforeItIsListed(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "a/f", "a", 0o644)
		put(t, root, "b/f", "b", 0o644)
		w := m.settled(t, root)
		w.before = func(op, rel string) error {
			if op == "list" && rel == "a" {
				require.NoError(t, os.RemoveAll(filepath.Join(root, "a")))
			}
			return nil
		}
		require.Equal(t, []string{"b/f"}, paths(observe(t, w)))
	})
}

func TestWorkspaceReportsPermissionErrorsNamingThePath(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		for _, c := range []struct{ op, path string }{
			{"read", "sub/locked"},
			{"list", "sub"},
		} {
			t.Run(c.op, func(t *testing.T) {
				root := t.TempDir()
				put(t, root, "ok", "ok", 0o644)
				put(t, root, "sub/locked", "no", 0o644)
				w := m.settled(t, root)
				w.before = func(op, rel string) error {
					if op == c.op && rel == c.path {
						return &fs.PathError{Op: "open", Path: filepath.Join(root, rel), Err: fs.ErrPermission}
					}
					return nil
				}
				_, err := w.Observe(context.Background())
				require.ErrorIs(t, err, fs.ErrPermission)
				var pe *fs.PathError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, c.path, pe.Path)
				require.Equal(t, fmt.Sprintf("observe %s: open %s: permission denied", w.Root(), c.path), err.Error())
			})
		}
	})
}

func TestWorkspaceReportsRealPermissionErrors(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		if runtime.GOOS == "windows" || os.Geteuid() == 0 {
			t.Skip("needs a user that file permissions apply to")
		}
		for _, c := range []struct{ name, lock, want string }{
			{"unreadable file", "sub/file", "sub/file"},
			{"unreadable directory", "sub", "sub"},
		} {
			t.Run(c.name, func(t *testing.T) {
				root := t.TempDir()
				put(t, root, "sub/file", "x", 0o644)
				p := filepath.Join(root, filepath.FromSlash(c.lock))
				require.NoError(t, os.Chmod(p, 0))
				t.Cleanup(func() { _ = os.Chmod(p, 0o755) })
				_, err := m.settled(t, root).Observe(context.Background())
				require.ErrorIs(t, err, fs.ErrPermission)
				var pe *fs.PathError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, c.want, pe.Path)
			})
		}
	})
}

func TestWorkspaceCancelled(t *testing.T) {
	root := t.TempDir()
	for i := range 2000 {
		put(t, root, fmt.Sprintf("d%02d/f%04d", i%40, i), fmt.Sprint(i), 0o644)
	}
	forModes(t, func(t *testing.T, m testMode) {

		t.Run("before", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			w := m.settled(t, root)
			r := countReads(w)
			_, err := w.Observe(ctx)
			require.ErrorIs(t, err, context.Canceled)
			require.Empty(t, r.take())
		})
		t.Run("during", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := m.settled(t, root)
			var mu sync.Mutex
			n := 0
			w.before = func(string, string) error {
				mu.Lock()
				defer mu.Unlock()
				if n++; n == 10 {
					cancel()
				}
				return nil
			}
			start := time.Now()
			_, err := w.Observe(ctx)
			require.ErrorIs(t, err, context.Canceled)
			require.Less(t, time.Since(start), 30*time.Second) // room for a loaded machine
			mu.Lock()
			defer mu.Unlock()
			require.Less(t, n, 2000, "the walk stopped")
			require.Nil(t, w.tree, "a failed observation leaves the cache as it was")
		})
	})
}

func TestWorkspaceSkipOptions(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "main.go", "package main", 0o644)
		put(t, root, "node_modules/x/index.js", "x", 0o644)
		put(t, root, "web/node_modules/y.js", "y", 0o644)
		put(t, root, "build/out/bin", "b", 0o644)
		put(t, root, "build/keep", "k", 0o644)
		put(t, root, "debug.log", "l", 0o644)
		w := m.settled(t, root,
			WithSkipPaths("build/out", "debug.log"),
			WithSkipFunc(func(p string, dir bool) bool { return dir && filepath.Base(p) == "node_modules" }))
		require.Equal(t, []string{"build/keep", "main.go"}, paths(observe(t, w)))

		for _, bad := range []string{"", ".", "/abs", "../up", "a/../b", "a/"} {
			_, err := m.newWorkspace(t, root, WithSkipPaths(bad))
			require.Error(t, err, "%q", bad)
		}
	})
}

func TestNewWorkspaceErrors(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "file", "f", 0o644)
		_, err := m.newWorkspace(t, filepath.Join(root, "missing"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		_, err = m.newWorkspace(t, filepath.Join(root, "file"))
		require.ErrorContains(t, err, "not a directory")
		_, err = m.newWorkspace(t, root, WithBlobs(nil, 0))
		require.Error(t, err)
		_, err = m.newWorkspace(t, root, WithRacyWindow(-time.Second))
		require.Error(t, err)

		w, err := m.newWorkspace(t, root)
		require.NoError(t, err)
		require.NoError(t, os.RemoveAll(root))
		_, err = w.Observe(context.Background())
		require.ErrorIs(t, err, fs.ErrNotExist, "a root that is gone is an error, not an empty workspace")
	})
}

// A named pipe is listed by its kind, never opened (opening it would
// wait for a writer): see TestWorkspaceSeesSpecialFiles.
func TestWorkspaceListsPipesUnopened(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		mkfifo, err := exec.LookPath("mkfifo")
		if err != nil {
			t.Skip("no mkfifo")
		}
		root := t.TempDir()
		put(t, root, "f", "f", 0o644)
		out, err := exec.Command(mkfifo, filepath.Join(root, "pipe")).CombinedOutput()
		require.NoError(t, err, "%s", out)
		snap := observe(t, m.settled(t, root))
		require.Equal(t, []string{"f", "pipe"}, paths(snap))
		require.Equal(t, SpecialDigest(os.ModeNamedPipe), snap.Listing()[1].Digest)
	})
}

func TestWorkspaceConcurrentObserve(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		for i := range 100 {
			put(t, root, fmt.Sprintf("d%d/f%d", i%5, i), fmt.Sprint(i), 0o644)
		}
		w, err := m.newWorkspace(t, root)
		require.NoError(t, err)
		want := observe(t, w)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				s, err := w.Observe(context.Background())
				if err == nil && s.Hash != want.Hash {
					err = fmt.Errorf("hash %s, want %s", s.Hash, want.Hash)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
}

func TestSysStatReadsInodeAndCtime(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("checked where the stat record is known to have them")
	}
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	r, err := os.OpenRoot(filepath.Dir(p))
	require.NoError(t, err)
	defer r.Close()
	rfi, err := r.Lstat("f") // how the walk sees it
	require.NoError(t, err)
	k := statKeyOf(fi)
	require.NotZero(t, k.ino)
	require.InDelta(t, time.Now().UnixNano(), k.ctime, float64(time.Minute))
	require.Equal(t, k, statKeyOf(rfi))
	ino, ctime := inoCtime(nil)
	require.Zero(t, ino)
	require.Zero(t, ctime)
	ino, ctime = inoCtime(&struct{ X int }{})
	require.Zero(t, ino)
	require.Zero(t, ctime)
}
