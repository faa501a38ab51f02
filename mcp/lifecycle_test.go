package mcp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// markEnv marks a test server's process, so that the test can find it in
// /proc (in the sandbox, the server's own pid is its namespace's).
const markEnv = "HARNESS_MCPTEST_MARK"

// killMarked sends SIGKILL to every process whose environment holds
// markEnv=mark, and returns how many it found.
func killMarked(t *testing.T, mark string) int {
	t.Helper()
	want := []byte(markEnv + "=" + mark + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	n := 0
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// callOf is a request of tool with args, as the runtime makes one.
func callOf(tl mcp.Tool, id, args string) action.Request {
	schema := tl.Schema()
	return action.Request{ActionID: id, Payload: []byte(args), MCP: tl.MCPCall(args, &schema), Sandbox: tl.Sandbox()}
}

func toolNamed(c *mcp.Client, name string) mcp.Tool {
	for _, t := range c.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// A local server killed (SIGKILL, the real process) between calls is
// started again before the next call, which the report records; the
// restarts are bounded (MaxRestarts), after which a call is not made and
// says how the server last ended. The protocol revision is the pinned one,
// recorded on each request.
func TestKilledServerRestarted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spec, err := sandbox.Default(dir, "")
	require.NoError(t, err)
	mark := rand.Text()
	srv := stdioServer(t)
	srv.Env[markEnv] = mark
	c, err := mcp.Connect(ctx, mcp.Servers{"t": srv}, mcp.Options{Workspace: dir, Sandbox: spec})
	require.NoError(t, err)
	defer c.Close()
	st := c.Status()[0]
	require.Equal(t, mcp.Connected, st.State, st.Error)
	require.Equal(t, mcp.ProtocolVersion, st.Protocol)
	echo := toolNamed(c, "mcp__t__echo")
	require.NotNil(t, echo)
	require.Equal(t, mcp.ProtocolVersion, echo.MCPCall(`{}`, nil).Protocol, "the request records the protocol agreed")

	r, err := echo.Execute(ctx, callOf(echo, "a1", `{"text":"one"}`))
	require.NoError(t, err)
	require.Equal(t, facts.StatusSucceeded, r.Status, r.Error)
	require.Empty(t, r.MCP.Restart)

	for i := 1; i <= mcp.MaxRestarts+1; i++ {
		require.NotZero(t, killMarked(t, mark), "the server's process is found")
		require.Eventually(t, func() bool { return c.Status()[0].State == mcp.Exited }, 10*time.Second, 20*time.Millisecond)
		r, err = echo.Execute(ctx, callOf(echo, "a"+strconv.Itoa(i+1), `{"text":"again"}`))
		require.NoError(t, err)
		if i > mcp.MaxRestarts {
			break
		}
		require.Equal(t, facts.StatusSucceeded, r.Status, r.Error)
		require.Contains(t, r.MCP.Restart, "signal: killed")
		require.Contains(t, r.MCP.Restart, "restart "+strconv.Itoa(i)+" of at most")
		st = c.Status()[0]
		require.Equal(t, mcp.Connected, st.State)
		require.Equal(t, i, st.Restarts)
		require.Contains(t, st.LastExit, "killed")
	}
	require.Equal(t, facts.StatusFailed, r.Status)
	require.Contains(t, r.Error, "not called: the server is gone")
	require.Contains(t, r.Error, "started again 3 times already")
	require.False(t, r.InDoubt, "a call not made is not in doubt")
}
