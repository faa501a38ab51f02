package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
)

// resourceServer is a server with resources: notes (listed), big (listed,
// over mcp.MaxResource) and any mem://item/{id} (a template, not
// listed); read records each URI it was asked for.
func resourceServer(t *testing.T) (*sdk.Server, func() []string) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "resources", Version: "1"}, nil)
	var mu sync.Mutex
	var read []string
	text := func(uri, s string) *sdk.ReadResourceResult {
		mu.Lock()
		read = append(read, uri)
		mu.Unlock()
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: s}}}
	}
	srv.AddResource(&sdk.Resource{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain", Description: "\x1b[2JThe notes"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return text(req.Params.URI, "hello notes"), nil
		})
	srv.AddResource(&sdk.Resource{URI: "mem://big", Name: "big"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return text(req.Params.URI, strings.Repeat("x", mcp.MaxResource+1)), nil
		})
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "mem://item/{id}", Name: "item"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return text(req.Params.URI, "item "+strings.TrimPrefix(req.Params.URI, "mem://item/")), nil
		})
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), read...)
	}
}

// A thread reads servers' resources through mcp_read_resource, a read
// action through the boundary: requested with the server, run without a
// person, reported with the server's answer kept. An untrusted server is
// read only at a URI it lists (the model cannot make one up to carry
// something to it); a trusted server's templated URI is read; a resource
// over the bound is not taken; a server without resources, or not
// connected, is not in the tool's reach.
func TestReadResources(t *testing.T) {
	untrusted, readU := resourceServer(t)
	trusted, readT := resourceServer(t)
	hu, ht := httptestServer(t, untrusted, nil), httptestServer(t, trusted, nil)
	plain, _ := newTestServer(t.TempDir())
	hp := httptestServer(t, plain, nil)
	script := callEach(
		[2]string{"mcp_read_resource", `{"server":"r"}`},
		[2]string{"mcp_read_resource", `{"server":"r","uri":"file:///notes.txt"}`},
		[2]string{"mcp_read_resource", `{"server":"r","uri":"mem://item/the-secret-read-elsewhere"}`},
		[2]string{"mcp_read_resource", `{"server":"tr","uri":"mem://item/7"}`},
		[2]string{"mcp_read_resource", `{"server":"r","uri":"mem://big"}`},
		[2]string{"mcp_read_resource", `{"server":"p","uri":"file:///notes.txt"}`},
	)
	e := newEnv(t, "", mcp.Servers{"r": {URL: hu.URL}, "tr": {URL: ht.URL, Trusted: true}, "p": {URL: hp.URL}}, script)
	for _, s := range e.st.MCP.Status() {
		require.Equal(t, s.Name != "p", s.Resources, s.Name)
	}
	st := e.run("t1", drive.Approval{})
	require.Equal(t, harness.StatusDone, st.Status, st.Reason)

	sys := all[facts.SystemConfigured](e, "t1", facts.KindSystemConfigured)[0]
	var offered string
	for _, tl := range sys.Tools {
		if tl.Name == mcp.ReadResourceTool {
			offered = string(tl.Schema)
		}
	}
	require.Contains(t, offered, `"enum":["r","tr"]`, "only the servers that declared resources")

	req := all[facts.ActionRequested](e, "t1", facts.KindActionRequested)
	require.Len(t, req, 6)
	for _, r := range req[:5] {
		require.Equal(t, facts.Capability("read"), r.Capability)
		require.False(t, r.Confirm, "a read asks nobody")
		require.NotNil(t, r.MCP)
		require.NotEmpty(t, r.MCP.Offered)
	}
	require.Equal(t, "resources/list", req[0].MCP.Tool)
	require.Equal(t, "resources/read", req[1].MCP.Tool)
	require.Equal(t, "tr", req[3].MCP.Server)
	require.Nil(t, req[5].MCP, "no server p of resources: nothing to record")

	done := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, done, 6)
	report := func(i int) facts.Report { return done[i].Report }
	require.Equal(t, facts.StatusSucceeded, report(0).Status, report(0).Error)
	require.Contains(t, report(0).Stdout, "file:///notes.txt — notes (text/plain)")
	require.Contains(t, report(0).Stdout, "mem://big")
	require.Equal(t, facts.StatusSucceeded, report(1).Status, report(1).Error)
	require.Contains(t, report(1).Stdout, "hello notes")
	require.NotNil(t, report(1).MCP)
	require.Contains(t, string(report(1).MCP.Result), `"text":"hello notes"`, "the server's answer is kept")
	require.Equal(t, facts.StatusFailed, report(2).Status)
	require.Contains(t, report(2).Error, "is not trusted")
	require.Equal(t, facts.StatusSucceeded, report(3).Status, report(3).Error)
	require.Contains(t, report(3).Stdout, "item 7")
	require.Equal(t, facts.StatusFailed, report(4).Status)
	require.Contains(t, report(4).Error, fmt.Sprintf("over %d", mcp.MaxResource))
	require.Equal(t, facts.StatusFailed, report(5).Status)
	require.Contains(t, report(5).Error, `no connected server "p" offers resources`)

	require.Equal(t, []string{"file:///notes.txt", "mem://big"}, readU(), "the made-up URI never reached the untrusted server")
	require.Equal(t, []string{"mem://item/7"}, readT())
}

// A read reaches only a server the thread was offered: a server the tool
// named when the thread started, not one connected since.
func TestReadResourceOnlyOfferedServers(t *testing.T) {
	ctx := context.Background()
	a, _ := resourceServer(t)
	b, readB := resourceServer(t)
	ha, hb := httptestServer(t, a, nil), httptestServer(t, b, nil)
	c, err := mcp.Connect(ctx, mcp.Servers{"a": {URL: ha.URL}, "b": {URL: hb.URL}}, mcp.Options{Workspace: t.TempDir()})
	require.NoError(t, err)
	defer c.Close()
	tl := toolNamed(c, mcp.ReadResourceTool)
	require.NotNil(t, tl)
	old := facts.ToolSchema{Name: mcp.ReadResourceTool, Description: "as offered before b was added",
		Schema: facts.RawJSON(`{"type":"object","properties":{"server":{"type":"string","enum":["a"]},"uri":{"type":"string"}}}`)}
	args := `{"server":"b","uri":"file:///notes.txt"}`
	req := callOf(tl, "1-c", args)
	req.MCP = tl.MCPCall(args, &old)
	require.Empty(t, req.MCP.Offered)
	r, err := tl.Execute(ctx, req)
	require.NoError(t, err)
	require.Equal(t, facts.StatusFailed, r.Status)
	require.Contains(t, r.Error, `not offered the resources of server "b"`)
	require.Empty(t, readB())

	req = callOf(tl, "1-d", args) // offered as it is now
	r, err = tl.Execute(ctx, req)
	require.NoError(t, err)
	require.Equal(t, facts.StatusSucceeded, r.Status, r.Error)
	require.Equal(t, []string{"file:///notes.txt"}, readB())
}
