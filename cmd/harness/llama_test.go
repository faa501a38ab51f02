//go:build unix

package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRealLlamaServer runs harness, as a person does, against llama.cpp's
// own llama-server: the real OpenAI-compatible shapes, tool calls parsed
// by the server, an answer cut off at its output limit and a conversation
// over its context. It is opt-in: HARNESS_LLAMA_SERVER names the
// llama-server binary and HARNESS_LLAMA_MODELS a directory holding the
// stand-in models ../shared/tools/mkmodel.py writes (toolcall-f32.gguf,
// random-smollm2arch-f16.gguf); see README "Using a real model". Without
// them it is skipped, saying so; it is not counted as CI coverage.
func TestRealLlamaServer(t *testing.T) {
	server, models := os.Getenv("HARNESS_LLAMA_SERVER"), os.Getenv("HARNESS_LLAMA_MODELS")
	if server == "" || models == "" {
		t.Skip("no real model server: set HARNESS_LLAMA_SERVER (a llama-server binary) and HARNESS_LLAMA_MODELS (a directory of mkmodel.py's models) to run this test")
	}
	toolcall := filepath.Join(models, "toolcall-f32.gguf")
	random := filepath.Join(models, "random-smollm2arch-f16.gguf")

	t.Run("a tool call, approved", func(t *testing.T) {
		url := llamaServer(t, server, "-m", toolcall, "--jinja", "-c", "4096")
		dir, env := llamaWorkspace(t, url)
		out, errs, code := harnessEnv(t, dir, env, "run", "--model", "openai:toolcall", "Create hello.txt containing hi")
		require.Equal(t, 3, code, "a parked run exits 3:\n%s\n%s", out, errs)
		require.Contains(t, out, `model.turn             turn 1: calls write_file`, "the server's parsed tool call is the model's:\n%s", out)
		require.Contains(t, out, "parked: thread t1", out)
		require.NoFileExists(t, filepath.Join(dir, "hello.txt"), "nothing runs before the approval")

		out, errs, code = harnessEnv(t, dir, env, "approve", "t1", "--resume")
		require.Equal(t, 3, code, "parked again on the next call:\n%s\n%s", out, errs)
		b, err := os.ReadFile(filepath.Join(dir, "hello.txt"))
		require.NoError(t, err, out)
		require.Equal(t, "hi", string(b))
		// The stand-in model calls write_file again every turn: the
		// thread waits for the next approval.
		require.Contains(t, out, "turn 2: calls write_file", out)
		out, errs, code = harnessEnv(t, dir, env, "replay", "--verify", "t1")
		require.Equal(t, 0, code, "%s\n%s", out, errs)
	})

	t.Run("a tool call cut off at the output limit", func(t *testing.T) {
		url := llamaServer(t, server, "-m", toolcall, "--jinja", "-c", "4096", "-n", "12")
		dir, env := llamaWorkspace(t, url)
		out, errs, code := harnessEnv(t, dir, env, "run", "--model", "openai:toolcall", "--approve", "all", "Create hello.txt containing hi")
		require.Equal(t, 1, code, "a thread whose answers keep being cut fails:\n%s\n%s", out, errs)
		require.Contains(t, out, `cut off at a limit (stop reason "length")`, out)
		require.Contains(t, out, "3 turns in a row", out)
		require.NotContains(t, out, "action.requested", "a call cut mid-arguments never runs")
		require.NoFileExists(t, filepath.Join(dir, "hello.txt"))
		out, errs, code = harnessEnv(t, dir, env, "replay", "--verify", "t1")
		require.Equal(t, 0, code, "%s\n%s", out, errs)
	})

	t.Run("text cut off at the output limit", func(t *testing.T) {
		url := llamaServer(t, server, "-m", random, "--jinja", "-c", "2048", "-n", "8", "--ignore-eos")
		dir, env := llamaWorkspace(t, url)
		out, errs, code := harnessEnv(t, dir, env, "run", "--model", "openai:random", "Say hi")
		require.Equal(t, 1, code, "%s\n%s", out, errs)
		require.Equal(t, 3, strings.Count(out, `cut off at a limit (stop reason "length"`), out)
		require.NotContains(t, out, "done: thread", out)
	})

	t.Run("a conversation over the context", func(t *testing.T) {
		url := llamaServer(t, server, "-m", random, "--jinja", "-c", "256")
		dir, env := llamaWorkspace(t, url)
		long := strings.Repeat("Please read every word of this sentence carefully. ", 80)
		out, errs, code := harnessEnv(t, dir, env, "run", "--model", "openai:random", long)
		require.Equal(t, 1, code, "%s\n%s", out, errs)
		require.Contains(t, out, "context_overflow", "the server's refusal is recognised:\n%s", out)
		require.Contains(t, out, "model.call_failed", out)
	})
}

// llamaServer starts llama-server with args on a free port and returns
// its OpenAI base URL once it answers /health; the server is killed when
// the test ends.
func llamaServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(bin, append(args, "--host", "127.0.0.1", "--port", fmt.Sprint(port))...)
	logf, err := os.Create(filepath.Join(t.TempDir(), "llama-server.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = logf.Close()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		res, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 2*time.Minute, 200*time.Millisecond, "llama-server never became healthy; see %s", logf.Name())
	return base + "/v1"
}

// llamaWorkspace is a fresh workspace and the environment that points the
// OpenAI provider at the server.
func llamaWorkspace(t *testing.T, url string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	xdg := filepath.Join(t.TempDir(), "config")
	return dir, []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + xdg, "HARNESS_STORE=", "OPENAI_BASE_URL=" + url, "OPENAI_API_KEY="}
}
