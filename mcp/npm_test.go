package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/rewind"
)

// NPMEnv names the npm prefix the reference servers are installed in
// (npm install --prefix "$prefix" @modelcontextprotocol/server-everything
// @modelcontextprotocol/server-filesystem); .ci/run sets it. Without it
// the tests of the real servers are skipped — except in CI, where they
// fail.
const NPMEnv = "HARNESS_MCP_NPM"

// npmServer is the bin of an installed reference server.
func npmServer(t *testing.T, name string) string {
	t.Helper()
	prefix := os.Getenv(NPMEnv)
	if prefix == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: CI installs the reference MCP servers (see .ci/run)", NPMEnv)
		}
		t.Skipf("%s is not set; install the reference servers with: npm install --prefix DIR @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem, then set %s=DIR", NPMEnv, NPMEnv)
	}
	bin := filepath.Join(prefix, "node_modules", ".bin", name)
	_, err := os.Stat(bin)
	require.NoError(t, err, "%s=%s holds no %s", NPMEnv, prefix, name)
	return bin
}

// The reference server that exercises every protocol feature, run as a
// local server in the sandbox: its tools go through the boundary — text,
// a sum, an image, structured content, the roots the harness offers (the
// workspace), and its environment (the allow-list: no provider key
// reaches it). Its read-only tools run without a person because the
// settings trust it; the rest ask.
func TestServerEverything(t *testing.T) {
	bin := npmServer(t, "mcp-server-everything")
	t.Setenv("OPENAI_API_KEY", "sk-never-seen-by-a-server")
	e := newEnv(t, "", mcp.Servers{"ev": {Command: bin, Trusted: true}}, callEach(
		[2]string{"mcp__ev__echo", `{"message":"hello through the boundary"}`},
		[2]string{"mcp__ev__get-sum", `{"a":2,"b":40}`},
		[2]string{"mcp__ev__get-tiny-image", `{}`},
		[2]string{"mcp__ev__get-structured-content", `{"location":"New York"}`},
		[2]string{"mcp__ev__get-roots-list", `{}`},
		[2]string{"mcp__ev__get-env", `{}`},
		[2]string{"mcp__ev__toggle-simulated-logging", `{}`},
	))
	st := e.st.MCP.Status()[0]
	require.Equal(t, mcp.Connected, st.State, st.Error)
	require.Contains(t, toolNames(st), "mcp__ev__echo")

	out := e.run("t1", drive.Approval{})
	require.Equal(t, harness.StatusParked, out.Status, "toggle-simulated-logging is not read-only: a person is asked")
	require.Equal(t, "mcp__ev__toggle-simulated-logging", out.Waits[0].Tool)
	require.Equal(t, harness.StatusDone, e.answer("t1", true).Status)

	req := all[facts.ActionRequested](e, "t1", facts.KindActionRequested)
	done := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, done, 7)
	for i, d := range done {
		require.Equal(t, facts.StatusSucceeded, d.Report.Status, "%s: %s", req[i].Adapter, d.Report.Error)
		require.Equal(t, facts.EffectNone, d.EffectState, "%s: the observer saw nothing change", req[i].Adapter)
		require.NotEmpty(t, d.Report.MCP.Result)
		require.Equal(t, "ev", req[i].MCP.Server)
		require.Equal(t, i < 6, req[i].MCP.ReadOnly, req[i].Adapter)
	}
	require.Contains(t, done[0].Report.Stdout, "hello through the boundary")
	require.Contains(t, done[1].Report.Stdout, "42")
	require.Contains(t, done[2].Report.Stdout, "[image image/png")
	require.Contains(t, string(done[2].Report.MCP.Result), `"mimeType":"image/png"`)
	require.Contains(t, string(done[3].Report.MCP.Result), `"structuredContent"`)
	require.Contains(t, done[4].Report.Stdout, "file://"+e.root, "the workspace is the root the server is offered")
	require.NotContains(t, done[5].Report.Stdout, "sk-never-seen-by-a-server", "a server gets the allow-listed environment")
	require.NotContains(t, done[5].Report.Stdout, "OPENAI_API_KEY")
	require.Contains(t, done[5].Report.Stdout, "PATH")
}

// The reference filesystem server, confined to the workspace: a scripted
// model writes a file through it; the person approves the exact call; the
// observer sees the change; the declared check (file_equals, from the
// settings) passes; a write outside the workspace is refused by the
// server (it works in the roots the harness offers) and, were it not, by
// the sandbox; undo restores the workspace.
func TestServerFilesystem(t *testing.T) {
	bin := npmServer(t, "mcp-server-filesystem")
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "todo.txt"), []byte("buy milk\n"), 0o644))
	outside := filepath.Join(t.TempDir(), "outside.txt")
	e := newEnv(t, root, mcp.Servers{"fs": {Command: bin, Args: []string{root}, Checks: map[string]string{"write_file": mcp.CheckFileEquals}}},
		callEach(
			[2]string{"mcp__fs__write_file", `{"path":"` + filepath.Join(root, "todo.txt") + `","content":"buy milk\nwrite tests\n"}`},
			[2]string{"mcp__fs__write_file", `{"path":"` + outside + `","content":"escaped\n"}`},
		))
	st := e.run("t1", drive.Approval{Allow: []drive.Pattern{{Tool: "mcp__fs__write_file", Glob: "todo.txt"}}})
	require.Equal(t, harness.StatusParked, st.Status, "the write outside the workspace is put to a person")
	require.Equal(t, harness.StatusDone, e.answer("t1", true).Status)

	done := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, done, 2)
	w := done[0]
	require.Equal(t, facts.StatusSucceeded, w.Report.Status, w.Report.Error)
	require.Equal(t, facts.EffectObserved, w.EffectState)
	require.Len(t, w.Observation.Changed, 1)
	require.Equal(t, "todo.txt", w.Observation.Changed[0].Path)
	checks := all[facts.CheckRecorded](e, "t1", facts.KindCheckRecorded)
	require.Len(t, checks, 1)
	require.Equal(t, "file_equals", checks[0].Check.Name)
	require.Equal(t, "todo.txt", checks[0].Check.Target)
	require.Equal(t, facts.VerdictPass, checks[0].Verdict, checks[0].Reason)
	data, err := os.ReadFile(filepath.Join(root, "todo.txt"))
	require.NoError(t, err)
	require.Equal(t, "buy milk\nwrite tests\n", string(data))

	escaped := done[1]
	require.Equal(t, facts.StatusFailed, escaped.Report.Status)
	require.True(t, escaped.Report.MCP.IsError)
	require.Contains(t, strings.ToLower(escaped.Report.Stdout), "access denied")
	require.Equal(t, facts.EffectNone, escaped.EffectState)
	_, err = os.Stat(outside)
	require.ErrorIs(t, err, os.ErrNotExist)

	plan, err := rewind.Undo(context.Background(), e.rt, e.st.Actor, "t1", 0, "ana")
	require.NoError(t, err)
	require.Len(t, plan.Steps, 1)
	data, err = os.ReadFile(filepath.Join(root, "todo.txt"))
	require.NoError(t, err)
	require.Equal(t, "buy milk\n", string(data), "undo restores what the server wrote")
	restored := all[facts.WorkspaceRestored](e, "t1", facts.KindWorkspaceRestored)
	require.Len(t, restored, 1)
	raw, _ := json.Marshal(restored[0].Restored)
	require.Contains(t, string(raw), "todo.txt")
}

// The reference server's resources are listed and read through
// mcp_read_resource: the first one it lists, as the model would.
func TestServerEverythingResources(t *testing.T) {
	bin := npmServer(t, "mcp-server-everything")
	ctx := context.Background()
	e := newEnv(t, "", mcp.Servers{"ev": {Command: bin}}, `{"text": "Done."}`)
	tl := toolNamed(e.st.MCP, mcp.ReadResourceTool)
	require.NotNil(t, tl, "the server declares resources: %+v", e.st.MCP.Status())
	r, err := tl.Execute(ctx, callOf(tl, "1-l", `{"server":"ev"}`))
	require.NoError(t, err)
	require.Equal(t, facts.StatusSucceeded, r.Status, r.Error)
	first, _, _ := strings.Cut(r.Stdout, " ")
	first, _, _ = strings.Cut(first, "\n")
	require.NotEmpty(t, first, r.Stdout)
	args := fmt.Sprintf(`{"server":"ev","uri":%q}`, first)
	r, err = tl.Execute(ctx, callOf(tl, "1-r", args))
	require.NoError(t, err)
	require.Equal(t, facts.StatusSucceeded, r.Status, r.Error)
	require.Contains(t, r.Stdout, "[resource "+first)
	t.Log(first, cut200(r.Stdout))
}

func cut200(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}
