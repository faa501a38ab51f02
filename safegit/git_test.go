package safegit_test

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/safegit"
)

// hostileRepo makes a repository whose config and hooks run programs —
// an fsmonitor, hooks, a clean filter every file passes through (required),
// an external diff, a pager — each of which creates a file in marks.
func hostileRepo(t *testing.T) (root, marks string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root, marks = t.TempDir(), t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	git("init", "-q")
	prog := func(name string) string {
		p := filepath.Join(marks, name+".sh")
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ntouch '"+filepath.Join(marks, name)+"'\ncat\n"), 0o755))
		return p
	}
	for _, kv := range [][2]string{
		{"core.fsmonitor", prog("fsmonitor")},
		{"filter.evil.clean", prog("clean")},
		{"filter.evil.smudge", prog("smudge")},
		{"filter.evil.required", "true"},
		{"diff.external", prog("extdiff")},
		{"core.pager", prog("pager")},
	} {
		git("config", kv[0], kv[1])
	}
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-index-change"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git/hooks", h), []byte("#!/bin/sh\ntouch '"+filepath.Join(marks, h)+"'\n"), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitattributes"), []byte("* filter=evil\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	return root, marks
}

func marksIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".sh" {
			out = append(out, e.Name())
		}
	}
	return out
}

// The harness's own git calls run nothing a repository's config names:
// the same calls through plain git run the fsmonitor, the filter and the
// hooks (so the plant is live), through safegit.Command none of them.
func TestGitCommandRunsNothingTheRepositoryNames(t *testing.T) {
	ctx := context.Background()
	steps := [][]string{
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "x"},
		{"status", "--porcelain"},
		{"diff", "HEAD~0"},
		{"log", "-p", "-1"},
	}

	root, marks := hostileRepo(t)
	for _, args := range steps {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		_ = cmd.Run()
	}
	require.Subset(t, marksIn(t, marks), []string{"fsmonitor", "clean", "pre-commit", "post-commit"}, "plain git runs what the repository names")

	root, marks = hostileRepo(t)
	for _, args := range steps {
		cmd, err := safegit.Command(ctx, root, args...)
		require.NoError(t, err)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	require.Empty(t, marksIn(t, marks), "the harness's git ran a program the repository named")
}

// A filter whose name holds "=" cannot be switched off with -c: the call
// is refused rather than made.
func TestGitCommandRefusesWhatItCannotName(t *testing.T) {
	root, marks := hostileRepo(t)
	cmd := exec.Command("git", "config", "filter.a=b.clean", filepath.Join(marks, "clean.sh"))
	cmd.Dir = root
	require.NoError(t, cmd.Run())
	_, err := safegit.Command(context.Background(), root, "add", "-A")
	require.ErrorIs(t, err, safegit.ErrUnsafe)
	require.ErrorContains(t, err, `driver named "filter.a=b.clean"`)
}

// gitCmd is git with args in root: plain git, the plant's proof, or the
// harness's (safegit.Command).
func gitCmd(t *testing.T, root string, plain bool, args ...string) *exec.Cmd {
	t.Helper()
	if plain {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		return cmd
	}
	cmd, err := safegit.Command(context.Background(), root, args...)
	require.NoError(t, err)
	return cmd
}

// A merge driver the repository declares (and its attributes select) does
// not run when the harness merges: plain git runs it.
func TestGitCommandRunsNoMergeDriver(t *testing.T) {
	run := func(plain bool) []string {
		root, marks := hostileRepo(t)
		git := func(args ...string) {
			cmd := gitCmd(t, root, plain, args...)
			cmd.Env = append(safegit.Env(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
			_, _ = cmd.CombinedOutput()
		}
		// Only the merge driver stays planted; the rest is the other tests'.
		for _, k := range []string{"core.fsmonitor", "filter.evil.clean", "filter.evil.smudge", "filter.evil.required", "diff.external", "core.pager"} {
			git("config", "--unset", k)
		}
		require.NoError(t, os.Remove(filepath.Join(root, ".gitattributes")))
		git("config", "merge.evil.driver", "touch "+filepath.Join(marks, "merge")+"; false")
		require.NoError(t, os.WriteFile(filepath.Join(root, ".gitattributes"), []byte("a.txt merge=evil\n"), 0o644))
		git("add", "-A")
		git("commit", "-q", "-m", "base")
		git("checkout", "-q", "-b", "other")
		require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("other\n"), 0o644))
		git("commit", "-q", "-am", "other")
		git("checkout", "-q", "-")
		require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("main\n"), 0o644))
		git("commit", "-q", "-am", "main")
		git("merge", "-q", "--no-edit", "other")
		return marksIn(t, marks)
	}
	require.Contains(t, run(true), "merge", "plain git runs the merge driver (the plant is live)")
	require.NotContains(t, run(false), "merge", "the harness's git ran the repository's merge driver")
}

// A partial clone whose promisor remote is an ext:: command, allowed by
// the repository's own protocol.ext.allow: looking up a missing object
// would fetch from it, running the command. Nothing runs.
func TestGitCommandFetchesFromNoPromisor(t *testing.T) {
	root, marks := hostileRepo(t)
	mark := filepath.Join(marks, "PWNED")
	for _, kv := range [][2]string{
		{"core.repositoryformatversion", "1"},
		{"extensions.partialClone", "evil"},
		{"remote.evil.promisor", "true"},
		{"remote.evil.url", "ext::sh -c touch% " + mark},
		{"protocol.ext.allow", "always"},
	} {
		cmd := exec.Command("git", "config", kv[0], kv[1])
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	missing := "0123456789012345678901234567890123456789"
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git/refs/heads/harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git/refs/heads/harness/x"), []byte(missing+"\n"), 0o644))
	ctx := context.Background()
	_, _ = safegit.Run(ctx, root, "rev-parse", "--verify", "refs/heads/harness/x^{commit}")
	_, _ = safegit.Run(ctx, root, "cat-file", "-p", missing)
	_, _ = safegit.Run(ctx, root, "diff", missing, "--")
	require.NoFileExists(t, mark, "the promisor's ext:: command ran")
}

// A commondir planted in the repository's .git leads git to another
// config (and its programs): refused, before git runs.
func TestGitCommandRefusesAPlantedCommondir(t *testing.T) {
	root, _ := hostileRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git/commondir"), []byte("evil\n"), 0o644))
	_, err := safegit.Run(context.Background(), root, "status")
	require.ErrorIs(t, err, safegit.ErrUnsafe)
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	_, err = safegit.Run(context.Background(), sub, "status")
	require.ErrorIs(t, err, safegit.ErrUnsafe, "found from a directory below too")
}

// A filter declared only in a file an includeIf names, whose condition
// does not hold where the harness asks git config but holds where its git
// call works: git worktree add checks out in the new worktree (gitdir
// under worktrees/) on its new branch. Plain git runs the smudge there;
// the harness's git runs it for neither condition, nor for a filter in a
// file such a file includes in turn.
func TestGitCommandRunsNoConditionallyIncludedFilter(t *testing.T) {
	for _, cond := range []string{"gitdir:**/worktrees/**", "onbranch:harness/**", "onbranch:nested/**"} {
		t.Run(cond, func(t *testing.T) {
			run := func(plain bool) []string {
				root, marks := hostileRepo(t)
				git := func(args ...string) {
					cmd := exec.Command("git", args...)
					cmd.Dir = root
					cmd.Env = append(safegit.Env(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
					out, err := cmd.CombinedOutput()
					require.NoError(t, err, "%s", out)
				}
				for _, k := range []string{"core.fsmonitor", "filter.evil.clean", "filter.evil.smudge", "filter.evil.required", "diff.external", "core.pager"} {
					git("config", "--unset", k)
				}
				git("add", "-A")
				git("commit", "-q", "-m", "base") // .gitattributes: * filter=evil
				smudge := "[filter \"evil\"]\n\tsmudge = \"touch " + filepath.Join(marks, "smudge") + "; cat\"\n"
				inc := filepath.Join(root, ".git", "evil.inc")
				if cond == "onbranch:nested/**" {
					// the conditional file only includes another, relative to itself
					require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "deeper"), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "deeper", "evil2.inc"), []byte(smudge), 0o644))
					smudge = "[include]\n\tpath = deeper/evil2.inc\n"
				}
				require.NoError(t, os.WriteFile(inc, []byte(smudge), 0o644))
				git("config", "includeIf."+cond+".path", "evil.inc")
				branch := "harness/x"
				if cond == "onbranch:nested/**" {
					branch = "nested/x"
				}
				wt := filepath.Join(t.TempDir(), "wt")
				args := []string{"worktree", "add", "-q", "-b", branch, wt}
				out, err := gitCmd(t, root, plain, args...).CombinedOutput()
				require.NoError(t, err, "%s", out)
				return marksIn(t, marks)
			}
			require.Contains(t, run(true), "smudge", "plain git runs the smudge (the plant is live)")
			require.NotContains(t, run(false), "smudge", "the harness's git ran the repository's smudge")
		})
	}
}

// A config that includes more files than the harness reads is refused,
// not run with some of its drivers left on.
func TestGitCommandRefusesEndlessIncludes(t *testing.T) {
	root, _ := hostileRepo(t)
	dir := filepath.Join(root, ".git")
	for i := range 70 {
		body := "[include]\n\tpath = inc" + strconv.Itoa(i+1) + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "inc"+strconv.Itoa(i)), []byte(body), 0o644))
	}
	cmd := exec.Command("git", "config", "includeIf.onbranch:never/**.path", "inc0")
	cmd.Dir = root
	require.NoError(t, cmd.Run())
	_, err := safegit.Command(context.Background(), root, "status")
	require.ErrorIs(t, err, safegit.ErrUnsafe)
	require.ErrorContains(t, err, "includes more than")
}

// A commondir that names the git directory itself (".", the placeholder
// the sandbox keeps read-only while commands run) leads git nowhere
// else: harness's own git still runs there.
func TestGitCommandTakesACommondirNamingItself(t *testing.T) {
	root, _ := hostileRepo(t)
	for _, c := range []string{".\n", "./\n", filepath.Join(root, ".git") + "\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git/commondir"), []byte(c), 0o644))
		_, err := safegit.Run(context.Background(), root, "rev-parse", "--git-dir")
		require.NoError(t, err, "commondir %q", c)
	}
}

// Two more ways to an includeIf's file (rev-sbx13b): the harness's git run
// from a subdirectory of the repository (git gives the including file's
// origin relative to the top, not to the subdirectory), and a path
// spelled "~user/" (that user's home, here the person's own).
func TestGitCommandRunsNoIncludedFilterFromElsewhere(t *testing.T) {
	for _, form := range []string{"rel", "tildeuser"} {
		t.Run(form, func(t *testing.T) {
			run := func(plain bool) []string {
				root, marks := hostileRepo(t)
				git := func(args ...string) {
					cmd := exec.Command("git", args...)
					cmd.Dir = root
					cmd.Env = append(safegit.Env(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
					out, err := cmd.CombinedOutput()
					require.NoError(t, err, "%s", out)
				}
				for _, k := range []string{"core.fsmonitor", "filter.evil.clean", "filter.evil.smudge", "filter.evil.required", "diff.external", "core.pager"} {
					git("config", "--unset", k)
				}
				require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, "sub", "f"), []byte("x"), 0o644))
				git("add", "-A")
				git("commit", "-q", "-m", "base")
				smudge := "[filter \"evil\"]\n\tsmudge = \"touch " + filepath.Join(marks, "smudge") + "; cat\"\n"
				inc := filepath.Join(root, ".git", "evil.inc")
				require.NoError(t, os.WriteFile(inc, []byte(smudge), 0o644))
				val := "evil.inc"
				if form == "tildeuser" {
					// The user running the test, and their home as the
					// system's user database has it (what "~user" names,
					// whatever $HOME and $USER say).
					me, err := user.Current()
					require.NoError(t, err)
					rel, err := filepath.Rel(me.HomeDir, inc)
					require.NoError(t, err)
					val = "~" + me.Username + "/" + rel
				}
				git("config", "includeIf.onbranch:harness/**.path", val)
				wt := filepath.Join(t.TempDir(), "wt")
				args := []string{"worktree", "add", "-q", "-b", "harness/x", wt}
				dir := filepath.Join(root, "sub")
				if form == "tildeuser" {
					dir = root
				}
				out, err := gitCmd(t, dir, plain, args...).CombinedOutput()
				require.NoError(t, err, "%s", out)
				return marksIn(t, marks)
			}
			require.Contains(t, run(true), "smudge", "plain git runs the smudge (the plant is live)")
			require.NotContains(t, run(false), "smudge", "the harness's git ran the repository's smudge")
		})
	}
}
