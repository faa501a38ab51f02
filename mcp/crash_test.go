package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// childEnv makes the test binary a harness (see TestMain) that runs a
// thread calling mcp__t__hold in the workspace its value names, with the
// servers of childServersEnv (JSON), and approves the call by policy.
const (
	childEnv        = "HARNESS_MCPTEST_HARNESS"
	childServersEnv = "HARNESS_MCPTEST_SERVERS"
	// childScriptEnv, when set, is the model's script instead of
	// holdScript.
	childScriptEnv = "HARNESS_MCPTEST_SCRIPT"
)

const holdScript = `{"text": "holding", "tool_calls": [{"id": "h", "name": "mcp__t__hold", "args": "{}"}]}
{"text": "Done."}
`

// runChild is the harness of TestKilledDuringACall: it never returns on
// its own (the call it makes never answers); it is killed.
func runChild(root string) int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	var servers mcp.Servers
	if err := json.Unmarshal([]byte(os.Getenv(childServersEnv)), &servers); err != nil {
		return fail(err)
	}
	place, err := stock.Locate(root, "")
	if err != nil {
		return fail(err)
	}
	store, err := place.OpenStore(ctx, 10*time.Second, true)
	if err != nil {
		return fail(err)
	}
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"))
	if err != nil {
		return fail(err)
	}
	st, err := stock.NewStock(place, cfg, stock.WithMCP(ctx, servers))
	if err != nil {
		return fail(err)
	}
	script := holdScript
	if s := os.Getenv(childScriptEnv); s != "" {
		script = s
	}
	m, err := model.ParseScript("script", []byte(script))
	if err != nil {
		return fail(err)
	}
	svc, err := st.Services(m, stock.BlobsOf(store))
	if err != nil {
		return fail(err)
	}
	rt, err := harness.NewRuntime(store, svc, st.Config)
	if err != nil {
		return fail(err)
	}
	th := rt.Thread(st.Actor, "t1")
	if _, err := th.Start(ctx, "Hold on."); err != nil {
		return fail(err)
	}
	// It says a question once it is recorded (drive tells it after the
	// fact is appended), for the test to kill it then.
	said := func(e drive.Event) {
		if e.Kind == drive.EventAsked {
			fmt.Printf("%s%s\n", childAsked, e.Request)
		}
	}
	_, err = drive.Drive(ctx, th, drive.Options{Approval: approveAll, Progress: said})
	return fail(fmt.Errorf("the call returned: %v", err))
}

// childAsked begins the line the child prints once a question is
// recorded.
const childAsked = "child: asked "

// waitAsked waits until the child has printed that a question is
// recorded.
func waitAsked(t *testing.T, out fmt.Stringer) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), childAsked) }, 60*time.Second, 10*time.Millisecond,
		"the child never recorded the server's question: %s", out)
}

// A harness killed (SIGKILL) while an MCP call runs leaves the action in
// doubt: the next harness never calls the tool again by itself; it
// observes, records action.interrupted (for a local server, with the
// change its call made before the kill) and parks on reconcile. A person
// abandons it and the thread goes on; the server carried the call out
// once.
func TestKilledDuringACall(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			root := t.TempDir()
			marks := filepath.Join(root, "calls.txt")
			var srv mcp.Server
			var calls func() int64
			if tr.name == "stdio" {
				srv = stdioServer(t)
				srv.Env[callsEnv] = marks
				calls = func() int64 {
					b, _ := os.ReadFile(marks)
					return int64(strings.Count(string(b), "call\n"))
				}
			} else {
				srv, calls = tr.server(t, root)
			}
			servers, err := json.Marshal(mcp.Servers{"t": srv})
			require.NoError(t, err)
			exe, err := os.Executable()
			require.NoError(t, err)
			child := exec.Command(exe)
			child.Env = append(os.Environ(), childEnv+"="+root, childServersEnv+"="+string(servers))
			var out bytes.Buffer
			child.Stdout, child.Stderr = &out, &out
			require.NoError(t, child.Start())
			deadline := time.Now().Add(30 * time.Second)
			for calls() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			reached := calls()
			require.NoError(t, child.Process.Signal(syscall.SIGKILL))
			_ = child.Wait()
			require.EqualValues(t, 1, reached, "the child's call reached the server: %s", out.String())

			e := newEnv(t, root, mcp.Servers{"t": srv}, holdScript)
			st, err := drive.Inspect(context.Background(), e.thread("t1"))
			require.NoError(t, err)
			require.Equal(t, []string{"1-h"}, st.InDoubt)
			st = e.run("t1", approveAll)
			require.Equal(t, harness.StatusParked, st.Status)
			require.Len(t, st.Waits, 1)
			require.Equal(t, "reconcile", string(st.Waits[0].Kind))
			in := all[facts.ActionInterrupted](e, "t1", facts.KindActionInterrupted)
			require.Len(t, in, 1)
			if tr.name == "stdio" {
				require.Len(t, in[0].Changed, 1, "the observer saw what the call did before the kill")
				require.Equal(t, "calls.txt", in[0].Changed[0].Path)
			}
			require.EqualValues(t, 1, calls(), "the call in doubt is not made again")

			d, err := facts.NewDraft(facts.KindEffectReconciled, "", facts.EffectReconciled{ActionID: "1-h", Decision: facts.DecisionAbandon, By: "ana"})
			require.NoError(t, err)
			_, err = drive.PostAnswer(context.Background(), e.thread("t1"), d, drive.AnswerKey(facts.KindEffectReconciled, "1-h"))
			require.NoError(t, err)
			st = e.run("t1", approveAll)
			require.Equal(t, harness.StatusDone, st.Status, st.Reason)
			require.Empty(t, all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted))
			require.EqualValues(t, 1, calls(), "the server carried the call out once")
		})
	}
}
