package tools_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/tools"
)

// pdeathParentDir, set in the environment, makes this test binary the
// "harness" of TestRunCommandDiesWithHarness: it runs a long command in
// that workspace until it is killed.
const pdeathParentDir = "TOOLS_TEST_PDEATH_PARENT_DIR"

// A command's shell dies with a harness that is SIGKILLed — which leaves
// the harness no chance to kill the process group itself.
func TestRunCommandDiesWithHarness(t *testing.T) {
	if dir := os.Getenv(pdeathParentDir); dir != "" {
		s, err := tools.New(dir)
		require.NoError(t, err)
		// The shell writes its pid and stays, as the parent of sleep.
		call(t, s, tools.RunCommand, `{"command": "echo $$ > sh.pid.tmp && mv sh.pid.tmp sh.pid; sleep 20; true", "timeout_seconds": 20}`)
		return
	}
	dir := t.TempDir()
	parent := exec.Command(os.Args[0], "-test.run=^TestRunCommandDiesWithHarness$", "-test.count=1")
	parent.Env = append(os.Environ(), pdeathParentDir+"="+dir)
	require.NoError(t, parent.Start())
	t.Cleanup(func() {
		_ = parent.Process.Kill()
		_ = parent.Wait()
	})
	sh := pidFrom(t, dir, "sh.pid")
	t.Cleanup(func() { _ = syscall.Kill(-sh, syscall.SIGKILL) }) // the sleep, which the signal does not cover
	require.True(t, alive(sh))

	require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
	_ = parent.Wait()
	require.Eventually(t, func() bool { return !alive(sh) }, 4*time.Second, 10*time.Millisecond,
		"the shell %d outlived its SIGKILLed harness", sh)
}
