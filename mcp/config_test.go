package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
)

// Settings that cannot work are refused before anything starts, naming
// the server and what is wrong.
func TestServerValidate(t *testing.T) {
	cases := []struct {
		name   string
		server mcp.Server
		want   string
	}{
		{"ok", mcp.Server{Command: "npx", Args: []string{"-y", "x"}}, ""},
		{"ok-http", mcp.Server{URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${T}"}}, ""},
		{"ok-typed", mcp.Server{Type: "http", URL: "http://localhost:9/mcp"}, ""},
		{"bad name", mcp.Server{Command: "x"}, "the name may hold only letters"},
		{"a__b", mcp.Server{Command: "x"}, `may not hold "__"`},
		{"nocmd", mcp.Server{Args: []string{"x"}}, `a stdio server needs a "command"`},
		{"both", mcp.Server{Command: "x", URL: "http://h/"}, `not "url", "headers" or "oauth"`},
		{"nourl", mcp.Server{Type: "http"}, `an http server needs a "url"`},
		{"cmdhttp", mcp.Server{Type: "http", URL: "http://h/", Command: "x"}, `not "command", "args" or "env"`},
		{"ftp", mcp.Server{URL: "ftp://h/"}, "want an http:// or https:// URL"},
		{"sse", mcp.Server{Type: "sse", URL: "http://h/sse"}, `type "sse"`},
		{"odd", mcp.Server{Type: "carrier-pigeon", Command: "x"}, `type "carrier-pigeon": want "stdio" or "http"`},
		{"timeout", mcp.Server{Command: "x", Timeout: "soon"}, `timeout "soon"`},
		{"check", mcp.Server{Command: "x", Checks: map[string]string{"write": "looks_right"}}, `check "looks_right" is not one of [file_equals]`},
		{"netremote", mcp.Server{URL: "http://h/", Network: true}, `"network" is for a stdio server`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.server.Validate(c.name)
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, mcp.ErrConfig)
			require.ErrorContains(t, err, `"`+c.name+`"`)
			require.ErrorContains(t, err, c.want)
		})
	}
	err := mcp.Servers{"b": {}, "a": {Type: "sse"}}.Validate()
	require.ErrorContains(t, err, `"a"`)
	require.ErrorContains(t, err, `"b"`)
	require.Less(t, strings.Index(err.Error(), `"a"`), strings.Index(err.Error(), `"b"`), "every bad server is named, in name order")
}

func TestToolName(t *testing.T) {
	require.Equal(t, "mcp__github__create_issue", mcp.ToolName("github", "create_issue"))
	require.Equal(t, "mcp__fs__read_file_v2", mcp.ToolName("fs", "read.file/v2"))
}

// ${VAR} in the settings is the harness's environment; a variable that is
// not set and has no default stops the server from being started at all.
// A remote server's headers reach it, and are never recorded.
func TestVariablesAndHeaders(t *testing.T) {
	root := t.TempDir()
	srv, _ := newTestServer(root)
	seen := make(chan string, 16)
	hs := httptestServer(t, srv, func(r *http.Request) {
		select {
		case seen <- r.Header.Get("Authorization"):
		default:
		}
	})
	t.Setenv("HARNESS_TEST_TOKEN", "s3cret-token")

	_, err := mcp.Connect(context.Background(), mcp.Servers{"t": {URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer ${HARNESS_TEST_UNSET}"}}}, mcp.Options{Workspace: root})
	require.ErrorIs(t, err, mcp.ErrConfig)
	require.ErrorContains(t, err, "the environment does not set HARNESS_TEST_UNSET")

	servers := mcp.Servers{"t": {URL: hs.URL + "?${HARNESS_TEST_UNSET:-x=1}", Headers: map[string]string{"Authorization": "Bearer ${HARNESS_TEST_TOKEN}"}}}
	e := newEnv(t, root, servers, call("mcp__t__echo", `{"text":"hi"}`))
	require.Equal(t, mcp.Connected, e.st.MCP.Status()[0].State, e.st.MCP.Status()[0].Error)
	require.Equal(t, harness.StatusDone, e.run("t1", approveAll).Status)
	require.Equal(t, "Bearer s3cret-token", <-seen)
	require.Equal(t, facts.StatusSucceeded, e.completion("t1").Report.Status)
	for _, f := range e.log("t1") {
		raw, err := f.MarshalJSON()
		require.NoError(t, err)
		require.NotContains(t, string(raw), "s3cret-token", "a header's value is never recorded")
	}
	req := all[facts.ActionRequested](e, "t1", facts.KindActionRequested)[0]
	require.Equal(t, hs.URL, req.MCP.Endpoint, "the endpoint is recorded without its query")
}

// A local server's call runs only in the sandbox its request recorded:
// approved to run with no network, it is not made by a harness whose
// server has the network.
func TestSandboxAsRecorded(t *testing.T) {
	root := t.TempDir()
	e := newEnv(t, root, mcp.Servers{"t": stdioServer(t)}, call("mcp__t__write", `{"path":"x.txt","content":"x"}`))
	require.Equal(t, harness.StatusParked, e.run("t1", drive.Approval{}).Status)
	e.close()
	srv := stdioServer(t)
	srv.Network = true
	e = newEnv(t, root, mcp.Servers{"t": srv}, call("mcp__t__write", `{"path":"x.txt","content":"x"}`))
	require.Equal(t, harness.StatusDone, e.answer("t1", true).Status)
	done := e.completion("t1")
	require.Equal(t, facts.StatusFailed, done.Report.Status)
	require.Contains(t, done.Report.Error, "the request was approved to run in sandbox workspace-write (network false), and the server runs in workspace-write (network true)")
	require.NoFileExists(t, root+"/x.txt")
}
