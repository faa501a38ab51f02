package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
)

// An MCP tool is a tool of the runtime's toolbox: package mcp names no
// harness type (it sits below the runtime in the package table), so this
// says its Tool still fits.
var _ harness.ToolAdapter = mcp.Tool(nil)

// transport is a test server reached one way: its settings, and how many
// calls it carried out.
type transport struct {
	name   string
	server func(t *testing.T, root string) (mcp.Server, func() int64)
}

// transports are the go-sdk test server over stdio (the test binary,
// re-executed in the sandbox: its calls are counted by what they write)
// and over streamable HTTP (in this process: counted in memory).
var transports = []transport{
	{"stdio", func(t *testing.T, root string) (mcp.Server, func() int64) {
		return stdioServer(t), nil
	}},
	{"http", func(t *testing.T, root string) (mcp.Server, func() int64) {
		hs, calls := httpServer(t, root)
		return mcp.Server{URL: hs.URL}, calls.n.Load
	}},
}

// An approved call runs once: requested with the server, the tool, the
// arguments and the digest before it runs; confirmed by a person; the
// report is the server's result; a local server's write is observed, a
// remote server's effect is reported. A resume runs nothing again.
func TestApprovedRunsOnce(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			root := t.TempDir()
			srv, calls := tr.server(t, root)
			e := newEnv(t, root, mcp.Servers{"t": srv}, call("mcp__t__write", `{"path":"out.txt","content":"hello\n"}`))
			st := e.run("t1", drive.Approval{})
			require.Equal(t, harness.StatusParked, st.Status)
			require.Equal(t, "mcp__t__write", st.Waits[0].Tool)
			_, err := os.Stat(filepath.Join(root, "out.txt"))
			require.ErrorIs(t, err, os.ErrNotExist, "nothing runs before the approval")

			req := all[facts.ActionRequested](e, "t1", facts.KindActionRequested)
			require.Len(t, req, 1)
			require.NotNil(t, req[0].MCP)
			require.Equal(t, "t", req[0].MCP.Server)
			require.Equal(t, "write", req[0].MCP.Tool)
			require.Equal(t, tr.name, req[0].MCP.Transport)
			require.Equal(t, st.Waits[0].Digest, req[0].MCP.Digest, "the request records the digest the approval is bound to")
			require.NotEmpty(t, req[0].MCP.Offered)
			require.JSONEq(t, `{"path":"out.txt","content":"hello\n"}`, string(req[0].Payload))
			require.True(t, req[0].Confirm)
			require.Equal(t, facts.Capability("execute"), req[0].Capability)
			sys := all[facts.SystemConfigured](e, "t1", facts.KindSystemConfigured)[0]
			var offered *facts.ToolSchema
			for i := range sys.Tools {
				if sys.Tools[i].Name == "mcp__t__write" {
					offered = &sys.Tools[i]
				}
			}
			require.NotNil(t, offered, "system.configured records the MCP tools the model was offered")
			require.Equal(t, mcp.DefinitionDigest(*offered), req[0].MCP.Offered)

			st = e.answer("t1", true)
			require.Equal(t, harness.StatusDone, st.Status)
			data, err := os.ReadFile(filepath.Join(root, "out.txt"))
			require.NoError(t, err)
			require.Equal(t, "hello\n", string(data))
			done := e.completion("t1")
			require.Equal(t, facts.StatusSucceeded, done.Report.Status)
			require.Contains(t, done.Report.Stdout, "wrote 6 bytes to out.txt")
			require.NotNil(t, done.Report.MCP)
			var kept struct {
				Content []map[string]any `json:"content"`
				IsError bool             `json:"isError"`
			}
			require.NoError(t, json.Unmarshal(done.Report.MCP.Result, &kept), "the result is kept whole, as JSON")
			require.Equal(t, []map[string]any{{"type": "text", "text": "wrote 6 bytes to out.txt"}}, kept.Content)
			require.Equal(t, len(done.Report.MCP.Result), done.Report.MCP.Size)
			switch tr.name {
			case "stdio":
				require.Equal(t, facts.EffectObserved, done.EffectState)
				require.Len(t, done.Observation.Changed, 1)
				require.Equal(t, "out.txt", done.Observation.Changed[0].Path)
				require.NotNil(t, req[0].Sandbox, "a local server's sandbox is on the request")
			case "http":
				require.Equal(t, facts.EffectReported, done.EffectState, "nobody can look at a remote server")
				require.False(t, done.Observation.Available)
				require.Nil(t, req[0].Sandbox)
				require.EqualValues(t, 1, calls())
			}

			st = e.run("t1", drive.Approval{})
			require.Equal(t, harness.StatusDone, st.Status)
			require.Len(t, all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted), 1, "a resume runs nothing again")
			if calls != nil {
				require.EqualValues(t, 1, calls())
			}
		})
	}
}

// A denied call is never made: the report is denied, the server carried
// out nothing, nothing changed.
func TestDenied(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			root := t.TempDir()
			srv, calls := tr.server(t, root)
			e := newEnv(t, root, mcp.Servers{"t": srv}, call("mcp__t__write", `{"path":"out.txt","content":"hello\n"}`))
			require.Equal(t, harness.StatusParked, e.run("t1", drive.Approval{}).Status)
			require.Equal(t, harness.StatusDone, e.answer("t1", false).Status)
			done := e.completion("t1")
			require.Equal(t, facts.StatusDenied, done.Report.Status)
			require.Contains(t, done.Report.Error, "ana denied the call: tested")
			require.Empty(t, all[facts.ActionStarted](e, "t1", facts.KindActionStarted), "the adapter was not invoked")
			_, err := os.Stat(filepath.Join(root, "out.txt"))
			require.ErrorIs(t, err, os.ErrNotExist)
			if calls != nil {
				require.Zero(t, calls())
			}
		})
	}
}

// A call that fails tells why, with the class of the failure: the tool's
// own isError (the result kept, its text shown), a server that does not
// answer within its timeout, a server that dies during the call (how it
// ended, and what it said last), and a tool whose call is approved by
// pattern.
func TestFailures(t *testing.T) {
	cases := []struct {
		name, tool  string
		transports  []string
		timeout     string
		class       facts.ErrorClass
		isError     bool
		inDoubt     bool
		errContains []string
	}{
		{name: "isError", tool: "fail", transports: []string{"stdio", "http"}, isError: true,
			errContains: []string{"mcp__t__fail: the tool reported an error (isError): the widget is jammed"}},
		{name: "timeout", tool: "slow", transports: []string{"stdio", "http"}, timeout: "300ms", class: facts.ClassTimeout, inDoubt: true,
			errContains: []string{"no answer within 300ms", "whether the server carried it out is unknown"}},
		{name: "crash", tool: "crash", transports: []string{"stdio"}, class: facts.ClassTransport, inDoubt: true,
			errContains: []string{"the server died during the call", "exit status 3", "boom: the test server crashed on purpose"}},
	}
	for _, c := range cases {
		for _, tr := range transports {
			if !slicesContains(c.transports, tr.name) {
				continue
			}
			t.Run(c.name+"/"+tr.name, func(t *testing.T) {
				root := t.TempDir()
				srv, _ := tr.server(t, root)
				srv.Timeout = c.timeout
				e := newEnv(t, root, mcp.Servers{"t": srv}, call("mcp__t__"+c.tool, `{}`))
				st := e.run("t1", drive.Approval{Allow: []drive.Pattern{{Tool: "mcp__t__*"}}})
				done := e.completion("t1")
				require.Equal(t, c.inDoubt, done.Report.InDoubt)
				if c.inDoubt {
					// In doubt: an open effect a person settles, as after a
					// crash, not a failure the model is shown.
					require.Equal(t, harness.StatusParked, st.Status, st.Reason)
					require.Len(t, st.Waits, 1)
					require.Equal(t, fold.WaitReconcile, st.Waits[0].Kind)
					require.Contains(t, st.Waits[0].Summary, "is in doubt")
					require.Equal(t, facts.EffectUnknown, done.EffectState)
					st = e.reconcile("t1", done.ActionID, facts.DecisionAbandon)
				}
				require.Equal(t, harness.StatusDone, st.Status, st.Reason)
				require.Equal(t, facts.StatusFailed, done.Report.Status)
				for _, s := range c.errContains {
					require.Contains(t, done.Report.Error, s)
				}
				require.NotNil(t, done.Report.MCP)
				require.Equal(t, c.class, done.Report.MCP.Class)
				require.Equal(t, c.isError, done.Report.MCP.IsError)
				if c.isError {
					require.Contains(t, done.Report.Stdout, "the widget is jammed")
					require.Contains(t, string(done.Report.MCP.Result), `"isError":true`)
				}
				want := facts.EffectNone
				switch {
				case c.inDoubt:
					want = facts.EffectUnknown
				case tr.name == "http":
					want = facts.EffectReported
				}
				require.Equal(t, want, done.EffectState)
				answers := all[facts.ConfirmationAnswered](e, "t1", facts.KindConfirmationAnswered)
				require.Len(t, answers, 1)
				require.Equal(t, drive.PolicyBy, answers[0].By, "a pattern answers for an MCP tool as for any")
				require.Equal(t, "allow mcp__t__*", answers[0].Reason)
			})
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
