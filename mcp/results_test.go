package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

var approveAll = drive.Approval{Mode: drive.ApproveAll}

// A result that does not parse is a failed report of class
// invalid_output, and a tool whose input schema is not an object schema
// is not offered (the status says why).
func TestMalformedResult(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	srv := mcp.Server{Command: exe, Env: map[string]string{serverEnv: "malformed"}}
	e := newEnv(t, "", mcp.Servers{"m": srv}, callEach([2]string{"mcp__m__bad", `{}`}, [2]string{"mcp__m__worse", `{}`}))
	st := e.st.MCP.Status()
	require.Equal(t, mcp.Connected, st[0].State, st[0].Error)
	require.Equal(t, []string{"mcp__m__bad", "mcp__m__worse"}, toolNames(st[0]))
	require.Len(t, st[0].Skipped, 1)
	require.Contains(t, st[0].Skipped[0], "odd: its input schema's type is string, not object")

	require.Equal(t, harness.StatusDone, e.run("t1", approveAll).Status)
	done := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, done, 2)
	for _, d := range done {
		require.Equal(t, facts.StatusFailed, d.Report.Status)
		require.Equal(t, facts.ClassInvalidOutput, d.Report.MCP.Class, d.Report.Error)
		require.Contains(t, d.Report.Error, "the server's result is malformed")
	}
	require.Contains(t, done[0].Report.Error, `"hologram"`)
}

func toolNames(s mcp.Status) []string {
	var out []string
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

// waitChanged is a model that, before its turn n, waits until the client
// has heard that a server changed its tool list.
type waitChanged struct {
	model.Model
	client *mcp.Client
}

func (w waitChanged) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	if req.Turn == 2 {
		deadline := time.Now().Add(10 * time.Second)
		for !w.client.Status()[0].Changed && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return w.Model.Turn(ctx, req)
}

// A server that changes its tool list mid-thread: a call of a tool it no
// longer offers, or offers with another definition than the one the
// thread was offered, is not made, and the failure says so; the tools it
// did not change go on working.
func TestToolListChanges(t *testing.T) {
	cases := []struct{ change, want string }{
		{"mutate", `the server changed its tool list during the thread: "echo" is no longer the tool the thread was offered`},
		{"drop", `the server changed its tool list during the thread and no longer offers "echo"`},
	}
	for _, c := range cases {
		for _, tr := range transports {
			t.Run(c.change+"/"+tr.name, func(t *testing.T) {
				root := t.TempDir()
				srv, calls := tr.server(t, root)
				e := newEnv(t, root, mcp.Servers{"t": srv}, callEach(
					[2]string{"mcp__t__" + c.change, `{}`},
					[2]string{"mcp__t__echo", `{"text":"hi"}`},
					[2]string{"mcp__t__write", `{"path":"after.txt","content":"still works\n"}`}))
				e.build(waitChanged{e.model, e.st.MCP})
				require.Equal(t, harness.StatusDone, e.run("t1", approveAll).Status)
				done := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
				require.Len(t, done, 3)
				require.Equal(t, facts.StatusSucceeded, done[0].Report.Status, done[0].Report.Error)
				require.Equal(t, facts.StatusFailed, done[1].Report.Status)
				require.Contains(t, done[1].Report.Error, c.want)
				require.Equal(t, facts.ClassNotFound, done[1].Report.MCP.Class)
				require.Equal(t, facts.StatusSucceeded, done[2].Report.Status, done[2].Report.Error)
				require.True(t, e.st.MCP.Status()[0].Changed)
				if calls != nil {
					require.EqualValues(t, 2, calls(), "echo was not called")
				}
			})
		}
	}
}

// A server's readOnlyHint lowers its tool to read, asked of nobody, only
// where the settings trust the server: an untrusted server's read-only
// tool asks like any other.
func TestReadOnlyHintOnlyWhenTrusted(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		srv := stdioServer(t)
		srv.Trusted = trusted
		e := newEnv(t, "", mcp.Servers{"t": srv}, call("mcp__t__echo", `{"text":"hi"}`))
		st := e.run("t1", drive.Approval{})
		req := all[facts.ActionRequested](e, "t1", facts.KindActionRequested)[0]
		info := e.st.MCP.Status()[0].Tools
		var echo mcp.ToolInfo
		for _, i := range info {
			if i.Remote == "echo" {
				echo = i
			}
		}
		require.True(t, echo.ReadOnlyHint)
		if !trusted {
			require.Equal(t, harness.StatusParked, st.Status, "an untrusted server's hint is ignored")
			require.True(t, req.Confirm)
			require.Equal(t, action.Execute, req.Capability)
			require.False(t, req.MCP.ReadOnly)
			require.True(t, echo.Confirm)
			continue
		}
		require.Equal(t, harness.StatusDone, st.Status)
		require.False(t, req.Confirm)
		require.Equal(t, action.Read, req.Capability)
		require.True(t, req.MCP.ReadOnly)
		require.Empty(t, all[facts.ConfirmationRequested](e, "t1", facts.KindConfirmationRequested))
		require.Contains(t, e.completion("t1").Report.Stdout, "echo: hi")
	}
}

// A large result is kept whole as a blob of the store, named by digest on
// the report; the model is shown its first and last parts. Content that is
// not text is kept with the result and named in what the model is shown.
func TestLargeAndBinaryResults(t *testing.T) {
	e := newEnv(t, "", mcp.Servers{"t": stdioServer(t)}, callEach(
		[2]string{"mcp__t__big", `{"kb":200}`}, [2]string{"mcp__t__image", `{}`}))
	require.Equal(t, harness.StatusDone, e.run("t1", approveAll).Status)
	done := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, done, 2)
	big := done[0].Report
	require.Equal(t, facts.StatusSucceeded, big.Status)
	require.Empty(t, big.MCP.Result)
	require.NotEmpty(t, big.MCP.Blob)
	require.Greater(t, big.MCP.Size, 200<<10)
	kept, err := stock.BlobsOf(e.store).GetBlob(context.Background(), big.MCP.Blob)
	require.NoError(t, err)
	require.Len(t, kept, big.MCP.Size)
	require.Contains(t, string(kept), "0123456789abcdef")
	require.Less(t, len(big.Stdout), mcp.ShownResult+200)
	require.Contains(t, big.Stdout, "bytes cut; the whole result is kept with the report")

	img := done[1].Report
	require.Contains(t, img.Stdout, "a pixel\n[image image/png, 15 bytes]")
	require.Contains(t, string(img.MCP.Result), `"type":"image"`)
	require.Contains(t, string(img.MCP.Result), `"mimeType":"image/png"`)
}

// A thread that was never offered a server's tools (it started before the
// server was in the settings) cannot call them: the call is not made.
func TestNotOffered(t *testing.T) {
	root := t.TempDir()
	script := call("mcp__t__echo", `{"text":"hi"}`)
	e := newEnv(t, root, nil, script)
	ctx := context.Background()
	out, err := e.thread("t1").Start(ctx, "Start before the server is there.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, "the scripted call fails: there is no such tool")
	e.close()

	// The same thread, its model asked again, now with the server.
	e = newEnv(t, root, mcp.Servers{"t": stdioServer(t)}, script+call("mcp__t__echo", `{"text":"hi"}`))
	d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "Try again."})
	require.NoError(t, err)
	_, err = e.thread("t1").Post(ctx, d, "again")
	require.NoError(t, err)
	_, err = drive.Drive(ctx, e.thread("t1"), drive.Options{Approval: approveAll})
	require.NoError(t, err)
	done := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, done, 2)
	require.Contains(t, done[1].Report.Error, "the thread was never offered mcp__t__echo")
	require.Empty(t, done[1].Report.Stdout)
}

// A trusted server whose command line names a file in the workspace (its
// program, which the model can rewrite with a write the approval mode
// lets through) gets no read-only lowering: its read-only tool asks like
// any other (rev-trust14: a rewritten tools/mcpsrv.py read a file outside
// the workspace as a "read", asked of nobody).
func TestReadOnlyHintNotForAProgramInTheWorkspace(t *testing.T) {
	for _, arg := range []string{"tools/srv.py", "--script=tools/srv.py"} {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, "tools"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "tools", "srv.py"), []byte("# the server\n"), 0o644))
		srv := stdioServer(t)
		srv.Trusted = true
		srv.Args = []string{arg}
		e := newEnv(t, root, mcp.Servers{"t": srv}, call("mcp__t__echo", `{"text":"hi"}`))
		st := e.run("t1", drive.Approval{})
		req := all[facts.ActionRequested](e, "t1", facts.KindActionRequested)[0]
		require.Equal(t, harness.StatusParked, st.Status, "%s: the hint was taken", arg)
		require.True(t, req.Confirm)
		require.Equal(t, action.Execute, req.Capability)
		require.False(t, req.MCP.ReadOnly)
	}
}
