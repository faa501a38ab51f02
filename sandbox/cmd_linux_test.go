package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// run runs line in spec and returns its output (stdout and stderr
// together) and exit.
func run(t *testing.T, spec sandbox.Spec, line string) (string, sandbox.Exit) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	c := &sandbox.Cmd{Spec: spec, Line: line, Stdout: w, Stderr: w}
	err = c.Start(context.Background())
	w.Close()
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	e, err := c.Wait()
	require.NoError(t, err)
	return string(out), e
}

func defaultSpec(t *testing.T) sandbox.Spec {
	t.Helper()
	spec, err := sandbox.Default(t.TempDir(), "")
	require.NoError(t, err)
	return spec
}

// This kernel offers what the sandbox needs (the CI machines are of the
// same kind); a missing feature, simulated by the spec or the
// environment, is reported, and an unknown one fails closed.
func TestProbe(t *testing.T) {
	sup := sandbox.Probe()
	require.NoError(t, sup.Err())
	require.True(t, sup.UserNamespaces)
	require.GreaterOrEqual(t, sup.LandlockABI, 3)

	sup = sandbox.Probe(sandbox.Landlock)
	require.Zero(t, sup.LandlockABI)
	require.ErrorIs(t, sup.Err(), sandbox.ErrUnavailable)
	require.EqualError(t, sup.Err(), "sandbox unavailable: Landlock is missing (simulated) (only mode off runs commands without it)")

	t.Setenv(sandbox.SimulateEnv, "userns, landlock")
	require.EqualError(t, sandbox.Probe().Err(), "sandbox unavailable: user namespaces are missing (simulated); Landlock is missing (simulated) (only mode off runs commands without it)")
	t.Setenv(sandbox.SimulateEnv, "landlok")
	require.ErrorContains(t, sandbox.Probe().Err(), `HARNESS_SANDBOX_SIMULATE_MISSING names "landlok", which is not "userns" or "landlock"`)
	t.Setenv(sandbox.SimulateEnv, "")
	require.NoError(t, sandbox.Probe().Err())
}

// Check: off needs nothing; the others need the kernel's features.
func TestCheck(t *testing.T) {
	spec := defaultSpec(t)
	require.NoError(t, spec.Check())
	spec.SimulateMissing = []sandbox.Feature{sandbox.UserNamespaces}
	require.ErrorIs(t, spec.Check(), sandbox.ErrUnavailable)
	require.ErrorContains(t, spec.Check(), "mode workspace-write: sandbox unavailable: user namespaces are missing (simulated)")
	c := &sandbox.Cmd{Spec: spec, Line: "true"}
	require.ErrorIs(t, c.Start(context.Background()), sandbox.ErrUnavailable)
	spec.Mode = sandbox.Off
	require.NoError(t, spec.Check())
	c = &sandbox.Cmd{Spec: spec, Line: "true"}
	require.ErrorIs(t, c.Start(context.Background()), sandbox.ErrInvalidSpec, "Cmd runs no mode off")
}

func TestCmdExit(t *testing.T) {
	spec := defaultSpec(t)
	for _, tc := range []struct {
		line string
		exit sandbox.Exit
		str  string
		out  string
	}{
		{"echo hi", sandbox.Exit{}, "exit status 0", "hi\n"},
		{"echo oops >&2; exit 3", sandbox.Exit{Code: 3}, "exit status 3", "oops\n"},
		{"kill -9 $$", sandbox.Exit{Code: -1, Signal: syscall.SIGKILL}, "signal: killed", ""},
		{"kill -TERM $$", sandbox.Exit{Code: -1, Signal: syscall.SIGTERM}, "signal: terminated", ""},
		{"no-such-command-xyz 2>/dev/null", sandbox.Exit{Code: 127}, "exit status 127", ""},
		{"pwd -P", sandbox.Exit{}, "exit status 0", spec.Workspace + "\n"},
		{"cat", sandbox.Exit{}, "exit status 0", ""}, // stdin is /dev/null
	} {
		out, e := run(t, spec, tc.line)
		require.Equal(t, tc.exit, e, tc.line)
		require.Equal(t, tc.str, e.String(), tc.line)
		require.Equal(t, tc.out, out, tc.line)
	}
}

var marks atomic.Int64

// mark is a sleep duration no other process has.
func mark() string { return fmt.Sprintf("40.%d%04d", os.Getpid()%100000, marks.Add(1)) }

// running lists the pids whose command line holds arg.
func running(arg string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		zombie := strings.Contains(string(stat), ") Z ")
		if err == nil && !zombie && slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Kill ends every process of the command, in whatever session; Wait then
// says SIGKILL, and nothing is left.
func TestCmdKill(t *testing.T) {
	spec := defaultSpec(t)
	a, b := mark(), mark()
	c := &sandbox.Cmd{Spec: spec, Line: fmt.Sprintf("setsid sleep %s & sleep %s", a, b)}
	require.NoError(t, c.Start(context.Background()))
	require.NotZero(t, c.Pid())
	require.Eventually(t, func() bool { return len(running(a)) == 1 && len(running(b)) == 1 }, 10*time.Second, 10*time.Millisecond)
	c.Kill()
	e, err := c.Wait()
	require.NoError(t, err)
	require.Equal(t, sandbox.Exit{Code: -1, Signal: syscall.SIGKILL}, e)
	require.Empty(t, running(a), "the kernel kills the namespace before the helper is reaped")
	require.Empty(t, running(b))
	c.Kill() // after the end: nothing
	e2, err := c.Wait()
	require.NoError(t, err)
	require.Equal(t, e, e2, "Wait again says the same")
}

// A shell that exits leaves nothing behind, and its temporary directory
// is removed.
func TestCmdLeavesNothing(t *testing.T) {
	spec := defaultSpec(t)
	a := mark()
	out, e := run(t, spec, fmt.Sprintf(`(setsid sleep %s &); echo "$TMPDIR"; touch "$TMPDIR/f"; chmod 500 "$TMPDIR"`, a))
	require.Zero(t, e.Code, out)
	require.Empty(t, running(a))
	tmp := strings.TrimSpace(out)
	require.True(t, strings.HasPrefix(filepath.Base(tmp), "harness-cmd-"), tmp)
	require.NoDirExists(t, tmp)
}

// A done context stops the start: the error is the context's and nothing
// runs.
func TestCmdStartCancelled(t *testing.T) {
	spec := defaultSpec(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &sandbox.Cmd{Spec: spec, Line: "touch ran"}
	require.ErrorIs(t, c.Start(ctx), context.Canceled)
	require.NoFileExists(t, filepath.Join(spec.Workspace, "ran"))
	_, err := c.Wait()
	require.ErrorContains(t, err, "not started")
}

// A Start cancelled at any moment either fails with the context's error,
// and then the command never ran, or succeeds: a command that ran is never
// reported as not started.
func TestCmdStartCancelledMidway(t *testing.T) {
	spec := defaultSpec(t)
	var failed, started int
	for i := range 40 {
		ran := filepath.Join(spec.Workspace, fmt.Sprintf("ran%d", i))
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%20)*500*time.Microsecond)
		c := &sandbox.Cmd{Spec: spec, Line: "touch " + filepath.Base(ran)}
		err := c.Start(ctx)
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.NoFileExists(t, ran, "a command reported as not started ran")
			failed++
			continue
		}
		_, _ = c.Wait()
		started++
	}
	t.Logf("%d starts cancelled, %d started", failed, started)
}

// A sandbox that cannot be set up is an error that says what failed; the
// command does not run.
func TestCmdSetupFails(t *testing.T) {
	spec := defaultSpec(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)                     // where the command's temporary directory is made
	spec.ReadOnly = []string{"/proc/self/fd/0"} // a magic link, not a mount point
	c := &sandbox.Cmd{Spec: spec, Line: "touch ran"}
	err := c.Start(context.Background())
	require.ErrorIs(t, err, sandbox.ErrSetup)
	require.ErrorContains(t, err, "make /proc/self/fd/0 read-only: ")
	require.NoFileExists(t, filepath.Join(spec.Workspace, "ran"))
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries, "the temporary directory is removed")
}

// Spec.Writable, Hidden and ReadOnly apply.
func TestCmdPaths(t *testing.T) {
	spec := defaultSpec(t)
	out := t.TempDir()
	secret := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(secret, "key"), []byte("SECRET"), 0o644))
	ro := filepath.Join(spec.Workspace, "vendor")
	require.NoError(t, os.Mkdir(ro, 0o755))
	spec.Writable = []string{out}
	spec.Hidden = append(spec.Hidden, secret, filepath.Join(spec.Workspace, "missing"))
	spec.ReadOnly = []string{ro}
	got, e := run(t, spec, fmt.Sprintf("touch %s/made; cat %s/key; ls -A %s; touch vendor/x; touch ok", out, secret, secret))
	require.Equal(t, 0, e.Code, got)
	require.FileExists(t, filepath.Join(out, "made"))
	require.NotContains(t, got, "SECRET")
	require.Contains(t, got, "Permission denied")
	require.Contains(t, got, "Read-only file system")
	require.NoFileExists(t, filepath.Join(ro, "x"))
	require.FileExists(t, filepath.Join(spec.Workspace, "ok"))
}

// A hidden file reads as empty (it is /dev/null there: what is written to
// it goes nowhere); a nested .harness that is a symlink hides
// where it leads, unless that holds the workspace (hiding it would only
// break the command).
func TestCmdHiddenFilesAndLinks(t *testing.T) {
	spec := defaultSpec(t)
	ws := spec.Workspace
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("SECRET"), 0o644))
	store := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(store, "CURRENT"), []byte("SECRET"), 0o644))
	for dir, target := range map[string]string{"a": store, "b": ws} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, dir), 0o755))
		require.NoError(t, os.Symlink(target, filepath.Join(ws, dir, sandbox.StoreName)))
	}
	spec.Hidden = append(spec.Hidden, file)
	got, e := run(t, spec, fmt.Sprintf("cat %s; echo >> %s; cat a/.harness/CURRENT; cat %s/CURRENT; ls b/.harness/ | grep -c '^a$'", file, file, store))
	require.Equal(t, 0, e.Code, got)
	require.NotContains(t, got, "SECRET")
	require.True(t, strings.HasSuffix(got, "\n1\n"), "the workspace is not hidden through b/.harness: %s", got)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "SECRET", string(data))
}

// A .git file a command writes cannot widen the next command's roots: the
// worktree directories it names are not writable, though they are made
// read-only where they exist.
func TestCmdPlantedGitFileWidensNothing(t *testing.T) {
	spec := defaultSpec(t)
	outside := t.TempDir()
	_, e := run(t, spec, "printf 'gitdir: %s\\n' '"+outside+"' > .git")
	require.Equal(t, 0, e.Code)
	out, e := run(t, spec, "touch '"+filepath.Join(outside, "planted")+"'")
	require.NotEqual(t, 0, e.Code, "%s", out)
	require.NoFileExists(t, filepath.Join(outside, "planted"))
	require.NotContains(t, spec.Record().Writable, outside)

	// Nor does the spec a later process computes from the workspace as it
	// now is: the planted .git is refused, and said to be.
	later, err := sandbox.Default(spec.Workspace, "")
	require.NoError(t, err)
	require.Equal(t, []string{spec.Workspace, spec.GoCache}, later.Record().Writable)
	require.Contains(t, later.Record().GitRefused, outside)
	out, e = run(t, later, "touch '"+filepath.Join(outside, "planted")+"'")
	require.NotEqual(t, 0, e.Code, "%s", out)
	require.Contains(t, out, "Permission denied")
	require.NoFileExists(t, filepath.Join(outside, "planted"))
}

// A FIFO where a .git file or a worktree's commondir should be cannot
// stall the start of a command: it is not read.
func TestGitPathsOfAFIFO(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir := filepath.Join(ws, "fake", "worktrees", "x")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gitdir"), []byte(filepath.Join(ws, ".git")+"\n"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "commondir"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: fake/worktrees/x\n"), 0o644))
	g := sandbox.GitPathsOf(ws)
	require.Contains(t, g.Refused, "commondir is not a regular file")
	require.Empty(t, g.Writable)

	require.NoError(t, os.Remove(filepath.Join(ws, ".git")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(ws, ".git"), 0o644))
	require.Equal(t, sandbox.GitPaths{}, sandbox.GitPathsOf(ws))
}

// A repository's info/ and each submodule's hooks, config and info are
// read-only, as its own hooks and config are; .git itself stays writable
// (git's lock files and renames), and so do objects and refs.
func TestCmdGitInfoAndModulesReadOnly(t *testing.T) {
	spec := defaultSpec(t)
	ws := spec.Workspace
	for _, d := range []string{".git/hooks", ".git/objects", ".git/refs/heads", ".git/modules/lib/hooks", ".git/modules/lib/objects", ".git/modules/a/b/info"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	for _, f := range []string{".git/HEAD", ".git/config", ".git/modules/lib/HEAD", ".git/modules/lib/config", ".git/modules/a/b/HEAD", ".git/modules/a/b/config"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644))
	}
	got, e := run(t, spec, strings.Join([]string{
		"echo '* filter=evil' > .git/info/attributes",
		"echo '[core] fsmonitor = ./evil' >> .git/modules/lib/config",
		"echo 'touch PWNED' > .git/modules/lib/hooks/post-checkout",
		"echo '[core] fsmonitor = ./evil' >> .git/modules/a/b/config",
		"echo '*' > .git/modules/a/b/info/exclude",
		"mkdir .git/modules/new && echo '[core]' > .git/modules/new/config",
		"touch .git/index.lock .git/objects/o .git/refs/heads/main .git/modules/lib/objects/o",
		"echo done",
	}, "; "))
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "Read-only file system")
	require.Contains(t, got, "done")
	require.NoFileExists(t, filepath.Join(ws, ".git/info/attributes"))
	require.NoFileExists(t, filepath.Join(ws, ".git/modules/lib/hooks/post-checkout"))
	require.NoFileExists(t, filepath.Join(ws, ".git/modules/a/b/info/exclude"))
	for _, f := range []string{".git/modules/lib/config", ".git/modules/a/b/config"} {
		data, err := os.ReadFile(filepath.Join(ws, f))
		require.NoError(t, err)
		require.Equal(t, "x\n", string(data), f)
	}
	require.DirExists(t, filepath.Join(ws, ".git/info"), "made, empty, to be made read-only")
	// A new submodule directory is not refused: the observer records it.
	require.FileExists(t, filepath.Join(ws, ".git/modules/new/config"))
	for _, f := range []string{".git/index.lock", ".git/objects/o", ".git/refs/heads/main", ".git/modules/lib/objects/o"} {
		require.FileExists(t, filepath.Join(ws, f))
	}
}

// In a workspace whose store lives elsewhere, a command cannot create
// .harness/project.json: an empty .harness is made before it starts and
// covered as the store is, in workspace-write; the store given elsewhere
// is hidden too.
func TestCmdCannotCreateTheWorkspaceHarness(t *testing.T) {
	ws := t.TempDir()
	store := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(store, "config.json"), []byte("SECRET"), 0o644))
	spec, err := sandbox.Default(ws, store)
	require.NoError(t, err)
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly} {
		spec.Mode = mode
		got, e := run(t, spec, fmt.Sprintf(`mkdir -p .harness; echo '{"approve":"all"}' > .harness/project.json; cat %s/config.json; mv .harness h2; rmdir .harness; echo done`, store))
		require.Equal(t, 0, e.Code, got)
		require.Contains(t, got, "done")
		require.NotContains(t, got, "SECRET", mode)
		require.NoFileExists(t, filepath.Join(ws, ".harness/project.json"), mode)
		require.NoDirExists(t, filepath.Join(ws, "h2"), mode)
	}
	entries, err := os.ReadDir(filepath.Join(ws, ".harness"))
	require.NoError(t, err)
	require.Empty(t, entries, "the .harness made is empty")
}

// In a linked worktree, whose git directory is a writable root outside the
// workspace (where no observer looks), git commit works but the commondir
// that says where the config is cannot be changed, nor the common
// directory's config, hooks or info.
func TestCmdWorktreeCommondirReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	main := t.TempDir()
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	git(main, "init", "-q")
	git(main, "commit", "-q", "--allow-empty", "-m", "one")
	wt := filepath.Join(t.TempDir(), "wt")
	git(main, "worktree", "add", "-q", wt)
	spec, err := sandbox.Default(wt, "")
	require.NoError(t, err)
	gitdir := filepath.Join(main, ".git/worktrees/wt")
	got, e := run(t, spec, strings.Join([]string{
		"echo ../../../evil > " + gitdir + "/commondir",
		"echo '[core] fsmonitor = x' >> " + main + "/.git/config",
		"echo '* filter=x' > " + main + "/.git/info/attributes",
		"touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed",
	}, "; "))
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "committed")
	data, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	require.NoError(t, err)
	require.Equal(t, "../..\n", string(data))
	require.NoFileExists(t, filepath.Join(main, ".git/info/attributes"))
	cfg, err := os.ReadFile(filepath.Join(main, ".git/config"))
	require.NoError(t, err)
	require.NotContains(t, string(cfg), "fsmonitor")
}

// A workspace file cannot be hard-linked (or moved) into the temporary
// directory or another writable root, where a write through the link
// would be a change the workspace's feed does not see; within the
// workspace, across directories, it can.
func TestCmdNoLinkOutOfTheWorkspace(t *testing.T) {
	spec := defaultSpec(t)
	if spec.Mode != sandbox.WorkspaceWrite {
		t.Skip("needs workspace-write")
	}
	out := t.TempDir()
	spec.Writable = []string{out}
	require.NoError(t, os.WriteFile(filepath.Join(spec.Workspace, "f"), []byte("kept\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(spec.Workspace, "sub"), 0o755))
	got, e := run(t, spec, fmt.Sprintf(`ln f "$TMPDIR/x" && echo tmp-linked; ln f %s/x && echo out-linked; ln f sub/g && echo in-linked`, out))
	require.Equal(t, 0, e.Code, got)
	require.NotContains(t, got, "tmp-linked")
	require.NotContains(t, got, "out-linked")
	require.Contains(t, got, "in-linked")
	require.NoFileExists(t, filepath.Join(out, "x"))
}
