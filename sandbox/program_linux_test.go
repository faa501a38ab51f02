package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// programEnv names, for this package's test binary only, a
// harness-sandbox that is to be the helper program of the whole run (see
// TestSuiteThroughHelperProgram).
const programEnv = "HARNESS_SANDBOX_TEST_PROGRAM"

func TestMain(m *testing.M) {
	if p := os.Getenv(programEnv); p != "" {
		if chosen, why := sandbox.ChooseHelperAt(p); !chosen {
			fmt.Fprintf(os.Stderr, "%s: not chosen: %s\n", p, why)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

var (
	builtOnce sync.Once
	built     string
	buildErr  error
)

// helperProgram builds harness-sandbox (sandbox/cmd/harness-sandbox) once
// per test binary and returns its path, in a directory of its own.
func helperProgram(t testing.TB) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build harness-sandbox with")
	}
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "harness-sandbox-test-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, sandbox.HelperName)
		out, err := exec.Command(goCmd, "build", "-o", built, "./cmd/harness-sandbox").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return built
}

// The sandbox's tests pass with harness-sandbox as the helper program:
// the package's test binary is run again with it chosen (TestMain).
func TestSuiteThroughHelperProgram(t *testing.T) {
	if os.Getenv(programEnv) != "" {
		t.Skip("this run is the one through the helper program")
	}
	prog := helperProgram(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^(TestProbe|TestCheck|TestCmd|TestStdin|TestNested|TestHelperProgramChosen|TestNetworkAllowList|TestNoAllowListNoProxy|Example)", "-test.count=1")
	cmd.Env = append(os.Environ(), programEnv+"="+prog)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "PASS")
}

// In the run through the helper program, the record says it is the one.
func TestHelperProgramChosen(t *testing.T) {
	if os.Getenv(programEnv) == "" {
		t.Skip("only in the run through the helper program")
	}
	spec := defaultSpec(t)
	require.Contains(t, spec.Record().Mechanism, "helper harness-sandbox as pid 1")
}

// A harness-sandbox is chosen only when it is fit to run outside the
// sandbox, and what runs is what was loaded: writing its path afterwards
// changes nothing.
func TestHelperProgramChoice(t *testing.T) {
	prog := helperProgram(t)
	data, err := os.ReadFile(prog)
	require.NoError(t, err)
	place := func(mode os.FileMode) string {
		dir := t.TempDir()
		p := filepath.Join(dir, sandbox.HelperName)
		require.NoError(t, os.WriteFile(p, data, mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}

	chosen, why := sandbox.UseHelper(t, filepath.Join(t.TempDir(), sandbox.HelperName))
	require.False(t, chosen)
	require.Contains(t, why, "is not there")
	require.Contains(t, defaultSpec(t).Record().Mechanism, "re-executed helper as pid 1")

	chosen, why = sandbox.UseHelper(t, place(0o775))
	require.False(t, chosen)
	require.Contains(t, why, "may be written by another user")

	link := filepath.Join(t.TempDir(), sandbox.HelperName)
	require.NoError(t, os.Symlink(place(0o755), link))
	chosen, why = sandbox.UseHelper(t, link)
	require.False(t, chosen)
	require.Contains(t, why, "is not there") // O_NOFOLLOW: a link is not opened

	open := place(0o755)
	require.NoError(t, os.Chmod(filepath.Dir(open), 0o777))
	chosen, why = sandbox.UseHelper(t, open)
	require.False(t, chosen)
	require.Contains(t, why, "lies in a directory another user may write")

	// One of another protocol (here: one that is no helper at all) fails
	// its trial.
	script := place(0o755)
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexit 2\n"), 0o755))
	chosen, why = sandbox.UseHelper(t, script)
	require.False(t, chosen)
	require.Contains(t, why, "trial helper")

	p := place(0o755)
	chosen, why = sandbox.UseHelper(t, p)
	require.True(t, chosen, why)
	spec := defaultSpec(t)
	require.Contains(t, spec.Record().Mechanism, "helper harness-sandbox as pid 1")
	marker := filepath.Join(t.TempDir(), "ran")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
	out, e := run(t, spec, "cat /proc/1/cmdline | tr '\\0' ' '")
	require.Equal(t, 0, e.Code, out)
	require.Equal(t, "harness-sandbox ", out)
	require.NoFileExists(t, marker)
}
