package tools_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
)

// storeSecret is what the store's files hold: no command may read it.
const storeSecret = "SECRET-STORE-BYTES"

// sandboxRepo returns a git repository holding a.txt, a store
// (.harness/db/CURRENT), a nested store (sub/.harness/db/CURRENT), and
// the tools of it in its default sandbox.
func sandboxRepo(t *testing.T) (*tools.Set, string) {
	t.Helper()
	root := repo(t)
	s, err := tools.New(root)
	require.NoError(t, err)
	require.Equal(t, sandbox.WorkspaceWrite, s.Sandbox().Mode)
	return s, root
}

// repo makes the repository of sandboxRepo.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("these tests need git: %v", err)
	}
	root := t.TempDir()
	for p, content := range map[string]string{
		"a.txt":                   "alpha\n",
		".harness/db/CURRENT":     storeSecret,
		"sub/.harness/db/CURRENT": storeSecret,
		"sub/b.txt":               "beta\n",
	} {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	git(t, root, "init", "-q")
	return root
}

// git runs git in dir, outside any sandbox, with an identity.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// sh runs a command line through run_command.
func sh(t *testing.T, s *tools.Set, command string) facts.Report {
	t.Helper()
	return call(t, s, tools.RunCommand, js(t, map[string]string{"command": command}))
}

// The store cannot be read, listed or written, under whatever name a
// command reaches it: the workspace's, a nested one, through a symlink, by
// its absolute path, or given explicitly elsewhere.
func TestSandboxHidesTheStore(t *testing.T) {
	elsewhere := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "CURRENT"), []byte(storeSecret), 0o644))
	root := repo(t)
	spec, err := sandbox.Default(root, elsewhere)
	require.NoError(t, err)
	s, err := tools.New(root, tools.WithSandbox(spec))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(".harness", filepath.Join(root, "h")))
	for _, command := range []string{
		"cat .harness/db/CURRENT",
		"ls .harness/db",
		"cat sub/.harness/db/CURRENT",
		"cat h/db/CURRENT",
		"cat " + filepath.Join(root, ".harness/db/CURRENT"),
		"cat " + filepath.Join(elsewhere, "CURRENT"),
		"echo forged > .harness/db/answer",
		"rm -rf .harness/db",
		"mv .harness stolen && cat stolen/db/CURRENT",
		"umount .harness && cat .harness/db/CURRENT",
		"unshare -Urm sh -c 'umount " + filepath.Join(root, ".harness") + " && cat " + filepath.Join(root, ".harness/db/CURRENT") + "'",
	} {
		rep := sh(t, s, command)
		require.NotContains(t, rep.Stdout+rep.Stderr, storeSecret, command)
		require.NotEqual(t, facts.StatusSucceeded, rep.Status, "%s: %s", command, rep.Stdout)
	}
	// Searching finds nothing.
	for _, command := range []string{
		"find . " + elsewhere + " -name CURRENT",
		"grep -rl " + storeSecret[:12] + " " + filepath.Dir(root) + " " + elsewhere,
	} {
		rep := sh(t, s, command)
		require.NotContains(t, rep.Stdout+rep.Stderr, "CURRENT", command)
	}
	require.Equal(t, storeSecret, readFile(t, root, ".harness/db/CURRENT"))
	require.Equal(t, storeSecret, readFile(t, root, "sub/.harness/db/CURRENT"))
	require.NoFileExists(t, filepath.Join(root, ".harness/db/answer"))
	require.NoDirExists(t, filepath.Join(root, "stolen"))
	// What the command may see is there.
	rep := sh(t, s, "cat a.txt sub/b.txt && ls .harness | wc -l")
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error+rep.Stderr)
	require.Equal(t, "alpha\nbeta\n0\n", rep.Stdout)
}

// Nothing outside the writable roots can be written: not the workspace's
// parent, not the home directory, not /tmp; the command's own $TMPDIR can.
func TestSandboxWritesOnlyTheWorkspace(t *testing.T) {
	s, root := sandboxRepo(t)
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	outside := []string{filepath.Join(filepath.Dir(root), "OUTSIDE"), filepath.Join(home, "OUTSIDE-"+filepath.Base(root)), filepath.Join(os.TempDir(), "OUTSIDE-"+filepath.Base(root))}
	for _, command := range []string{
		"touch ../OUTSIDE",
		"touch $HOME/OUTSIDE-" + filepath.Base(root),
		"touch /tmp/OUTSIDE-" + filepath.Base(root),
		"ln -s x ../OUTSIDE",
		"mkdir ../OUTSIDE",
		"truncate -s 0 ../" + filepath.Base(root) + "/a.txt && truncate -s 0 " + os.Args[0],
	} {
		rep := sh(t, s, command)
		require.Equal(t, facts.StatusFailed, rep.Status, "%s succeeded", command)
	}
	for _, p := range outside {
		require.NoFileExists(t, p)
		_, err := os.Lstat(p)
		require.ErrorIs(t, err, os.ErrNotExist, p)
	}
	rep := sh(t, s, `echo made > new.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" && echo err > /dev/stderr && echo null > /dev/null`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error+rep.Stderr)
	require.Equal(t, "tmp\n", rep.Stdout)
	require.Equal(t, "err\n", rep.Stderr)
	require.Equal(t, "made\n", readFile(t, root, "new.txt"))
}

// goModule writes a tiny Go module with one test into dir.
func goModule(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestM(t *testing.T) {}\n"), 0o644))
}

// go test works in the sandbox — with the workspace's own build cache, as
// GOCACHE — and what it runs or writes stays in the workspace: the -exec
// of the forged approval, and -c -o outside.
func TestSandboxGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the testing package into the workspace's build cache (slow when cold)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("this test needs go: %v", err)
	}
	root := repo(t)
	spec, err := sandbox.Default(root, "")
	require.NoError(t, err)
	// Each workspace has a build cache of its own, cold in a new one: the
	// test gives its workspaces one cache that outlives them, so that the
	// standard library is built once per machine, not once per run.
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	spec.GoCache = filepath.Join(cache, "harness", "test-go-build")
	s, err := tools.New(root, tools.WithSandbox(spec))
	require.NoError(t, err)
	goModule(t, root)
	parent := filepath.Dir(root)

	rep := call(t, s, tools.RunCommand, js(t, map[string]any{"command": "go test ./...", "timeout_seconds": 300}))
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error+"\n"+rep.Stdout+rep.Stderr)
	require.Contains(t, rep.Stdout, "ok  \texample.com/m")

	rep = call(t, s, tools.RunCommand, js(t, map[string]any{"command": `go test -exec 'sh -c "touch ../OUTSIDE; touch $HOME/OUTSIDE-` + filepath.Base(root) + `"' ./...`, "timeout_seconds": 300}))
	require.Equal(t, facts.StatusFailed, rep.Status, rep.Stdout+rep.Stderr)
	require.Contains(t, rep.Stdout+rep.Stderr, "Permission denied")
	rep = call(t, s, tools.RunCommand, js(t, map[string]any{"command": "go test -c -o ../x ./ && ls -l ../x", "timeout_seconds": 300}))
	require.Equal(t, facts.StatusFailed, rep.Status, rep.Stdout+rep.Stderr)

	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the workspace's parent holds the workspace only")
	home, _ := os.UserHomeDir()
	require.NoFileExists(t, filepath.Join(home, "OUTSIDE-"+filepath.Base(root)))
	require.NoFileExists(t, filepath.Join(parent, "x"))
}

// git add and git commit work; the hooks and the config cannot be
// changed, nor the .git directory swapped for one with hooks.
func TestSandboxGit(t *testing.T) {
	s, root := sandboxRepo(t)
	config := readFile(t, root, ".git/config")
	for _, command := range []string{
		"echo 'touch PWNED' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"rm -rf .git/hooks",
		"echo '[core] hooksPath = /tmp' >> .git/config",
		"git config core.hooksPath /tmp",
		"mv .git .git2",
		"rm .git/config",
	} {
		rep := sh(t, s, command)
		require.Equal(t, facts.StatusFailed, rep.Status, "%s succeeded", command)
	}
	require.NoFileExists(t, filepath.Join(root, ".git/hooks/pre-commit"))
	require.DirExists(t, filepath.Join(root, ".git/hooks"))
	require.NoDirExists(t, filepath.Join(root, ".git2"))
	require.Equal(t, config, readFile(t, root, ".git/config"))

	rep := sh(t, s, "git add a.txt && git -c user.name=agent -c user.email=agent@example.com commit -q -m 'from the sandbox' && git log --format=%s")
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error+"\n"+rep.Stderr)
	require.Equal(t, "from the sandbox\n", rep.Stdout)
	require.Equal(t, "from the sandbox\n", git(t, root, "log", "--format=%s"), "the commit is in the repository")
}

// A command sees its own processes only: not the harness's, its
// environment, or its files; it has no capabilities and no terminal.
func TestSandboxProcesses(t *testing.T) {
	secretEnv(t)
	s, _ := sandboxRepo(t)
	rep := sh(t, s, "cat /proc/*/environ | tr '\\0' '\\n'; ls /proc/"+strconv.Itoa(os.Getpid())+"; ls -d /proc/[0-9]* | wc -l")
	require.NotContains(t, rep.Stdout, "SECRET")
	require.NotContains(t, rep.Stdout, "OPENAI_API_KEY")
	require.Contains(t, rep.Stderr, "No such file or directory", "the test process is not in the command's /proc")
	lines := strings.Split(strings.TrimSpace(rep.Stdout), "\n")
	n, err := strconv.Atoi(lines[len(lines)-1])
	require.NoError(t, err, rep.Stdout)
	require.Less(t, n, 6, "only the helper and the command's own processes: %s", rep.Stdout)

	rep = sh(t, s, "grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status; grep NoNewPrivs /proc/self/status")
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n", rep.Stdout)

	rep = sh(t, s, "cat /proc/1/environ")
	require.Equal(t, facts.StatusFailed, rep.Status, "the helper's environ: %s", rep.Stdout)
	rep = sh(t, s, "echo > /dev/tty")
	require.Equal(t, facts.StatusFailed, rep.Status, "no terminal")
}

// dialEnv, set in a command's environment, makes this test binary dial
// the address it names and say "connected" or the error.
const dialEnv = "TOOLS_TEST_DIAL"

// The network is refused unless the sandbox allows it: a TCP connect to a
// server of the test process fails from a sandboxed command, and succeeds
// with Network; a command's own loopback server works either way.
func TestSandboxNetwork(t *testing.T) {
	if addr := os.Getenv(dialEnv); addr != "" {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		conn.Close()
		fmt.Println("connected")
		os.Exit(0)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	dial := fmt.Sprintf("%s=%s %s -test.run='^TestSandboxNetwork$'", dialEnv, addr, os.Args[0])
	root := t.TempDir()
	for _, tc := range []struct {
		network bool
		status  facts.ReportStatus
		out     string
	}{
		{false, facts.StatusFailed, "dial: dial tcp " + addr + ": connect: connection refused\n"},
		{true, facts.StatusSucceeded, "connected\n"},
	} {
		t.Run(fmt.Sprintf("network=%v", tc.network), func(t *testing.T) {
			spec, err := sandbox.Default(root, "")
			require.NoError(t, err)
			spec.Network = tc.network
			s, err := tools.New(root, tools.WithSandbox(spec))
			require.NoError(t, err)
			rep := sh(t, s, dial)
			require.Equal(t, tc.status, rep.Status, rep.Stdout+rep.Stderr)
			require.Equal(t, tc.out, rep.Stdout)
			// Its own loopback works: a listener and a connect inside.
			rep = sh(t, s, fmt.Sprintf("%s=127.0.0.1:1 %s -test.run='^TestSandboxNetwork$'", dialEnv, os.Args[0]))
			require.Contains(t, rep.Stdout, "connection refused", "loopback is up: a closed port refuses")
		})
	}
}

// In read-only mode the workspace cannot be written; $TMPDIR can.
func TestSandboxReadOnly(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644))
	spec, err := sandbox.Default(root, "")
	require.NoError(t, err)
	spec.Mode = sandbox.ReadOnly
	s, err := tools.New(root, tools.WithSandbox(spec))
	require.NoError(t, err)
	for _, command := range []string{"touch b.txt", "echo x >> a.txt", "rm a.txt", "mkdir d"} {
		rep := sh(t, s, command)
		require.Equal(t, facts.StatusFailed, rep.Status, "%s succeeded", command)
	}
	require.Equal(t, "alpha\n", readFile(t, root, "a.txt"))
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	rep := sh(t, s, `cat a.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error+rep.Stderr)
	require.Equal(t, "alpha\nt\n", rep.Stdout)
}

// sandboxParentDir, set in the environment, makes this test binary the
// "harness" of TestSandboxDiesWithHarness: it runs a command that starts
// processes in sessions of their own, until it is killed.
const sandboxParentDir = "TOOLS_TEST_SANDBOX_PARENT_DIR"

// Every process of a sandboxed command dies with a harness that is
// SIGKILLed: the shell, a setsid daemon, a double fork, whatever session
// or parent they have — the helper dies with the harness, and the kernel
// kills its PID namespace.
func TestSandboxDiesWithHarness(t *testing.T) {
	if dir := os.Getenv(sandboxParentDir); dir != "" {
		s, err := tools.New(dir)
		require.NoError(t, err)
		sh(t, s, os.Getenv(sandboxParentDir+"_COMMAND"))
		return
	}
	dir := t.TempDir()
	daemon, double, fg := marker(), marker(), marker()
	command := fmt.Sprintf("setsid sleep %s & (setsid sh -c 'sleep %s & exit' &); echo started; sleep %s", daemon, double, fg)
	parent := exec.Command(os.Args[0], "-test.run=^TestSandboxDiesWithHarness$", "-test.count=1")
	parent.Env = append(os.Environ(), sandboxParentDir+"="+dir, sandboxParentDir+"_COMMAND="+command, "TMPDIR="+t.TempDir()) // what the killed harness cannot remove lands there
	require.NoError(t, parent.Start())
	t.Cleanup(func() {
		_ = parent.Process.Kill()
		_ = parent.Wait()
	})
	for _, m := range []string{daemon, double, fg} {
		require.Eventually(t, func() bool { return len(procsWith(t, m)) == 1 }, 10*time.Second, 10*time.Millisecond, "sleep %s started", m)
	}
	require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
	_ = parent.Wait()
	gone(t, daemon, "a setsid daemon")
	gone(t, double, "a double-forked setsid daemon")
	gone(t, fg, "the foreground sleep")
}

// A command cannot signal the harness or anything outside its sandbox: not
// by pid, not by kill -9 -1; and killing its own pid 1 does not reach out
// either.
func TestSandboxCannotSignalOut(t *testing.T) {
	s, _ := sandboxRepo(t)
	sibling := exec.Command("sleep", marker())
	require.NoError(t, sibling.Start())
	t.Cleanup(func() {
		_ = sibling.Process.Kill()
		_ = sibling.Wait()
	})
	// kill -9 -1 outside a PID namespace would kill every process of the
	// machine: make sure first that the command does not see the test.
	rep := sh(t, s, fmt.Sprintf("test ! -e /proc/%d && test ! -e /proc/%d", os.Getpid(), sibling.Process.Pid))
	require.Equal(t, facts.StatusSucceeded, rep.Status, "the command sees the test's processes: not running kill -9 -1")
	rep = sh(t, s, fmt.Sprintf("kill -9 %d; kill -9 %d; kill -9 -1; for sig in KILL TERM HUP INT QUIT ILL TRAP ABRT SYS SEGV USR1; do kill -s $sig 1; done; echo alive", sibling.Process.Pid, os.Getpid()))
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error+rep.Stderr)
	require.Equal(t, "alive\n", rep.Stdout, "the shell and its helper survive what it sends them")
	require.True(t, alive(sibling.Process.Pid), "the test's own child was killed from the sandbox")
	// The test is alive, too: it runs this line.
}

// Where Landlock is missing — simulated by the spec or by the environment
// variable, never by skipping — a command fails with a clear error and
// does not run; mode off still runs it.
func TestSandboxUnavailable(t *testing.T) {
	root := t.TempDir()
	spec, err := sandbox.Default(root, "")
	require.NoError(t, err)
	missing := spec
	missing.SimulateMissing = []sandbox.Feature{sandbox.Landlock}
	s, err := tools.New(root, tools.WithSandbox(missing))
	require.NoError(t, err)
	rep := sh(t, s, "touch ran")
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Equal(t, "run_command: mode workspace-write: sandbox unavailable: Landlock is missing (simulated) (only mode off runs commands without it)", rep.Error)
	require.NoFileExists(t, filepath.Join(root, "ran"))

	t.Setenv(sandbox.SimulateEnv, "landlock")
	s, err = tools.New(root)
	require.NoError(t, err)
	rep = sh(t, s, "touch ran")
	require.Equal(t, "run_command: mode workspace-write: sandbox unavailable: Landlock is missing (simulated) (only mode off runs commands without it)", rep.Error)
	require.NoFileExists(t, filepath.Join(root, "ran"))

	s, err = tools.New(root, offSandbox)
	require.NoError(t, err)
	rep = sh(t, s, "touch ran && echo ran")
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "ran\n", rep.Stdout)
	require.FileExists(t, filepath.Join(root, "ran"))
}

// WithSandbox refuses a spec that cannot be run, and one for another
// workspace.
func TestWithSandboxInvalid(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	for _, tc := range []struct {
		name string
		spec sandbox.Spec
		err  string
	}{
		{"unknown mode", sandbox.Spec{Mode: "danger"}, `mode "danger" is not one of`},
		{"another workspace", sandbox.Spec{Mode: sandbox.WorkspaceWrite, Workspace: other}, "is not the tools' root"},
		{"hidden holds the workspace", sandbox.Spec{Mode: sandbox.WorkspaceWrite, Hidden: []string{filepath.Dir(root)}}, "which the command needs"},
		{"relative writable root", sandbox.Spec{Mode: sandbox.WorkspaceWrite, Writable: []string{"build"}}, `Writable: "build" is not an absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tools.New(root, tools.WithSandbox(tc.spec))
			require.ErrorContains(t, err, tc.err)
		})
	}
}
