package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// A plain .git directory whose commondir names the common directory
// elsewhere in the workspace: a command cannot make the commondir name a
// directory of its own (with a config that runs an fsmonitor).
func TestPlainGitCommondirReadOnly(t *testing.T) {
	ws, _ := gitRepo(t)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "c1"), 0o755))
	for _, n := range []string{"objects", "refs", "config", "hooks", "info"} {
		require.NoError(t, os.Rename(filepath.Join(ws, ".git", n), filepath.Join(ws, "c1", n)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git/commondir"), []byte("../c1\n"), 0o644))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, _ := run(t, spec, "mkdir -p evil && cp -r c1/objects c1/refs evil/ && printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > evil/config && echo ../evil > .git/commondir; echo rc=$?")
	t.Log(got)
	requireUnchanged(t, filepath.Join(ws, ".git/commondir"), "../c1\n")
}

// .git/config.worktree, which git reads as config once
// extensions.worktreeConfig is set, is read-only: existing, and missing
// (the sandbox makes it, empty, as it makes a missing config).
func TestPlainGitConfigWorktreeReadOnly(t *testing.T) {
	t.Run("existing", func(t *testing.T) {
		ws, g := gitRepo(t)
		g(ws, "config", "extensions.worktreeConfig", "true")
		g(ws, "config", "--worktree", "core.sparseCheckout", "false")
		before, err := os.ReadFile(filepath.Join(ws, ".git/config.worktree"))
		require.NoError(t, err)
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' >> .git/config.worktree; echo rc=$?")
		t.Log(got)
		requireUnchanged(t, filepath.Join(ws, ".git/config.worktree"), string(before))
	})
	t.Run("missing", func(t *testing.T) {
		ws, g := gitRepo(t)
		g(ws, "config", "extensions.worktreeConfig", "true")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > .git/config.worktree; echo rc=$?")
		t.Log(got)
		data, err := os.ReadFile(filepath.Join(ws, ".git/config.worktree"))
		require.NoError(t, err)
		require.Empty(t, string(data))
		// git still reads the configuration.
		g(ws, "config", "--get", "extensions.worktreeConfig")
	})
	t.Run("not read yet", func(t *testing.T) {
		// Without the extension git reads no config.worktree yet, and a
		// command cannot set it (config is read-only); but the person's
		// git sparse-checkout init sets it later, and then reads what a
		// command left there: an empty one is made all the same, and is
		// read-only (rev-readme14). (The runtime makes it before its
		// first reading: Spec.Prepare.)
		ws, _ := gitRepo(t)
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' >> .git/config.worktree; echo rc=$?")
		require.NotContains(t, got, "rc=0")
		data, err := os.ReadFile(filepath.Join(ws, ".git/config.worktree"))
		require.NoError(t, err)
		require.Empty(t, string(data))
		got, _ = run(t, spec, "git config extensions.worktreeConfig true; echo rc=$?")
		require.NotContains(t, got, "rc=0", "a command set the extension")
		out, err := exec.Command("git", "-C", ws, "config", "--get", "extensions.worktreeConfig").CombinedOutput()
		require.Error(t, err, "%s", out)
	})
}

// A command can swap a .git file, or a .git directory's commondir, for a
// FIFO and back while harness reads it (GitPathsOf runs before every
// command and every write_file): no read waits for a writer that never
// comes. The swap races the read; the loop makes a stall, when the read
// could wait, all but certain.
func TestGitFilesSwappedForFIFONeverStall(t *testing.T) {
	for _, c := range []struct {
		name    string
		where   func(repo string) (ws, target string)
		content string
	}{
		{".git file", func(repo string) (string, string) {
			ws := filepath.Join(repo, "sub")
			require.NoError(t, os.Mkdir(ws, 0o755))
			return ws, filepath.Join(ws, ".git")
		}, "gitdir: ../.git\n"},
		{"commondir", func(repo string) (string, string) { return repo, filepath.Join(repo, ".git/commondir") }, ".\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo, _ := gitRepo(t)
			ws, target := c.where(repo)
			regular, fifo, tmp := filepath.Join(ws, "regular"), filepath.Join(ws, "fifo"), filepath.Join(ws, "swap")
			require.NoError(t, os.WriteFile(regular, []byte(c.content), 0o644))
			require.NoError(t, syscall.Mkfifo(fifo, 0o644))
			stop := make(chan struct{})
			swapped := make(chan struct{})
			go func() {
				defer close(swapped)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					src := regular
					if i%2 == 1 {
						src = fifo
					}
					_ = os.Remove(tmp)
					if os.Link(src, tmp) == nil {
						_ = os.Rename(tmp, target)
					}
				}
			}()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 20000 {
					sandbox.GitPathsOf(ws)
				}
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				// Free the stalled read before failing: a writer opens the FIFO.
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				close(stop)
				<-swapped
				t.Fatal("GitPathsOf stalled on a FIFO swapped in")
			}
			close(stop)
			<-swapped
		})
	}
}

// A command that plants a submodule git directory whose hooks link leads
// nowhere inside the workspace blocks every later command (a command
// could make what it names): the refusal names the link, relative to the
// workspace, and says what to do; doing it lets commands start again.
func TestDanglingControlLinkRefusalNamesTheLink(t *testing.T) {
	ws, _ := gitRepo(t)
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "mkdir -p .git/modules/evil && echo ref > .git/modules/evil/HEAD && ln -s ../../../nothere .git/modules/evil/hooks; echo rc=$?")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "rc=0")
	c := &sandbox.Cmd{Spec: spec, Line: "true"}
	err = c.Start(t.Context())
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
	require.Contains(t, err.Error(), "symbolic link .git/modules/evil/hooks passes "+filepath.Join(ws, "nothere")+", which does not exist")
	require.Contains(t, err.Error(), "remove the link or create "+filepath.Join(ws, "nothere"))

	require.NoError(t, os.Mkdir(filepath.Join(ws, "nothere"), 0o755))
	got, e = run(t, spec, "echo x > nothere/pre-commit; echo rc=$?")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "Read-only")
	requireUnchanged(t, filepath.Join(ws, "nothere/pre-commit"), "")
}

// In a linked worktree, REPO/.git is a writable root: the other
// worktrees' git directories under REPO/.git/worktrees are read-only
// (the person's git in the other worktree reads their commondir and
// config.worktree), REPO/.git/worktrees cannot be renamed and made anew,
// and REPO/.git/config.worktree (the main worktree's) is read-only, made
// empty when missing. git commit still works; git worktree add does not
// (REPO/.git/worktrees is sealed: see GitPaths.Sealed).
func TestWorktreeCannotWriteOtherWorktrees(t *testing.T) {
	repo, g := gitRepo(t)
	base := realTemp(t)
	wt1, wt2 := filepath.Join(base, "wt1"), filepath.Join(base, "wt2")
	g(repo, "worktree", "add", "-q", wt1)
	g(repo, "worktree", "add", "-q", wt2)
	spec, err := sandbox.Default(wt1, "")
	require.NoError(t, err)
	R := filepath.Join(repo, ".git")
	evil := "printf '[core]\\n\\tfsmonitor = \"touch " + base + "/PWNED; false\"\\n'"
	got, e := run(t, spec, strings.Join([]string{
		"mkdir -p " + R + "/evil && cp -r " + R + "/objects " + R + "/refs " + R + "/evil/ && " + evil + " > " + R + "/evil/config",
		"echo ../../evil > " + R + "/worktrees/wt2/commondir",
		evil + " > " + R + "/worktrees/wt2/config.worktree",
		evil + " > " + R + "/config.worktree",
		"mv " + R + "/worktrees " + R + "/gone",
		"touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed",
		"git worktree add -q wt3 && echo added; true", // refused: REPO/.git/worktrees is sealed
	}, "; "))
	t.Log(got)
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "committed")
	require.NotContains(t, got, "added")
	requireUnchanged(t, filepath.Join(R, "worktrees/wt2/commondir"), "../..\n")
	// Made empty, read-only, before the command started (see prepare).
	if data, err := os.ReadFile(filepath.Join(R, "worktrees/wt2/config.worktree")); err == nil {
		require.Empty(t, string(data), "wt2's config.worktree was written")
	}
	data, err := os.ReadFile(filepath.Join(R, "config.worktree"))
	require.NoError(t, err)
	require.Empty(t, string(data))
	require.DirExists(t, filepath.Join(R, "worktrees/wt2"))
	for _, dir := range []string{wt2, repo} {
		cmd := exec.Command("git", "-c", "extensions.worktreeConfig=true", "status", "--short")
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		t.Logf("git status in %s: %s", dir, out)
	}
	require.NoFileExists(t, filepath.Join(base, "PWNED"))
}
