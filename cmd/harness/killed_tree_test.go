package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/internal/providertest"
)

// A parent process SIGKILLed while its child's model turn is in flight
// leaves nothing that spends: the child runs in the parent's process, so
// its request is cut off with it, and no process asks the model anything
// after — not a later look at the tree, not a stop, not a resume of the
// stopped tree. What the tree spent stays what its recorded turns say.
func TestKilledParentsChildrenSpendNothingMore(t *testing.T) {
	f := providertest.NewFake(t, providertest.OpenAI.Path,
		providertest.OpenAI.Calls("Delegating.", [3]string{"d1", "delegate", `{"task":"Read cache.toml","tools":["read_file"]}`}),
		providertest.Reply{Delay: 10 * time.Minute, Body: providertest.OpenAICompletion("the child's turn, never sent")},
		providertest.OpenAI.Text("asked after the kill"))
	dir := workspace(t, map[string]string{})
	env := []string{"NO_COLOR=1", "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + f.Server.URL + "/v1", "HARNESS_STORE="}
	cmd := exec.Command(harnessBin(t), "run", "--no-input", "--max-tokens", "1000000", "--model", "openai:fake", "Read the cache through a helper")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out harnesstest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return len(f.Requests()) == 2 }, 30*time.Second, 10*time.Millisecond,
		"the child's first turn never went out:\n%s", &out)
	require.Contains(t, string(f.Requests()[1]), "Read cache.toml", "the second request is the child's")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())

	// Nothing asks the model again: the child's request died with its
	// process, and nothing else drives the child.
	time.Sleep(2 * time.Second)
	require.Len(t, f.Requests(), 2, "a request after the kill")
	stdout, stderr, code := harnessEnv(t, dir, env, "log", "t1.1-d1")
	require.Zero(t, code, stderr)
	require.NotContains(t, stdout, "model.turn", "the child recorded no turn")
	stdout, stderr, code = harnessEnv(t, dir, env, "threads")
	require.Zero(t, code, stderr)
	require.Regexp(t, `(?m)^t1 `, stdout)
	require.Len(t, f.Requests(), 2, "looking at the tree asks nothing")

	// A person stops the tree; a resume of it then spends nothing.
	_, stderr, code = harnessEnv(t, dir, env, "stop", "t1", "--reason", "the run was killed")
	require.Zero(t, code, stderr)
	stdout, stderr, code = harnessEnv(t, dir, env, "resume", "t1", "--no-input")
	require.Equal(t, exitError, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "stopped")
	require.Len(t, f.Requests(), 2, "a stopped tree's resume asks the model nothing")
	stdout, _, _ = harnessEnv(t, dir, env, "log", "t1.1-d1")
	require.Contains(t, stdout, "thread.ended", "the child ended with its tree")
	require.True(t, strings.Contains(stdout, "stopped"), stdout)
	stdout, stderr, code = harnessEnv(t, dir, env, "replay", "t1", "--verify")
	require.Zero(t, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
}
