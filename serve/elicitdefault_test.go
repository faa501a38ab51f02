package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// defaultsServer is a go-sdk MCP server whose tool ask asks for a form
// whose fields carry defaults (SEP-1034): good ones, and hostile ones a
// person must not be shown as the server's offer (terminal escapes, an
// oversized string; defaults of the wrong type or not offered are
// TestElicitDefaultOf's: the go-sdk server refuses its own answer then).
func defaultsServer(t *testing.T) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "Ask the person."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Settings?",
				RequestedSchema: map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
					"name":  map[string]any{"type": "string", "default": "Ana"},
					"ttl":   map[string]any{"type": "integer", "default": 300},
					"color": map[string]any{"type": "string", "enum": []any{"red", "blue"}, "default": "blue"},
					"ok":    map[string]any{"type": "boolean", "default": true},
					"note":  map[string]any{"type": "string", "default": "\x1b[2Jpwned\u202e"},
					"big":   map[string]any{"type": "string", "default": strings.Repeat("x", drive.MaxElicitDefault+1)},
				}}})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil, nil
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("received %s %s", res.Action, b)}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// A server's defaults are shown to the person — on the page, the form
// filled with them, and in the API's state — and a field the person
// leaves empty takes its default in the answer recorded and sent; a
// default of the wrong type, not offered, oversized or with terminal
// escapes is not shown, nor recorded as the person's.
func TestElicitationDefaults(t *testing.T) {
	root := t.TempDir()
	script := `{"text": "asking", "tool_calls": [{"id": "a", "name": "mcp__s__ask", "args": "{}"}]}
{"text": "Done."}`
	scriptFile := filepath.Join(root, "script.jsonl")
	require.NoError(t, os.WriteFile(scriptFile, []byte(script), 0o644))
	ctx := context.Background()
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.HoldStore(ctx, 0, true)
	require.NoError(t, err)
	f := &fixture{t: t, root: root, script: "scripted:" + scriptFile, place: p, store: store}
	cfg, err := harness.NewConfig(harness.WithModelName(f.script), harness.WithModelBackoff(0))
	require.NoError(t, err)
	f.stock, err = stock.NewStock(p, cfg, stock.WithMCP(ctx, mcp.Servers{"s": {URL: defaultsServer(t)}}))
	require.NoError(t, err)
	f.serve()
	t.Cleanup(func() {
		f.close()
		f.stock.Close()
		require.NoError(t, store.Close())
	})
	m, err := stock.LoadModel(f.script)
	require.NoError(t, err)
	svc, err := f.stock.Services(m, stock.BlobsOf(f.store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(f.srv.Store(), svc, f.stock.Config)
	require.NoError(t, err)
	th := rt.Thread(f.stock.Actor, "t1")
	_, err = th.Start(ctx, "Ask.")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		_, err := drive.Drive(ctx, th, drive.Options{Approval: drive.Approval{Mode: drive.ApproveAll}})
		done <- err
	}()
	d := f.waitFor("t1", "the server's question", func(d serve.ThreadDetail) bool {
		return len(d.Waits) == 1 && d.Waits[0].Elicit != nil
	})
	w := d.Waits[0]

	// The API's state: each field with the default the server offers,
	// none for the hostile ones.
	resp, b := f.do("GET", "/api/threads/t1/state", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	var st struct {
		Waits []struct {
			Fields []drive.ElicitField `json:"fields"`
		} `json:"waits"`
	}
	require.NoError(t, json.Unmarshal(b, &st), "%s", b)
	require.Len(t, st.Waits, 1)
	defaults := map[string]string{}
	for _, fl := range st.Waits[0].Fields {
		defaults[fl.Name] = fl.Default
	}
	require.Equal(t, map[string]string{"name": "Ana", "ttl": "300", "color": "blue", "ok": "true",
		"note": "", "big": ""}, defaults)

	// The page: the form filled with them.
	c, get := f.browser(t)
	get("/?token=" + token)
	page := get("/t/t1")
	require.Contains(t, page, `name="field.name" value="Ana"`)
	require.Contains(t, page, `name="field.ttl" value="300"`)
	require.Contains(t, page, `<option value="blue" selected>`)
	require.Contains(t, page, `<input type="hidden" name="field.ok" value="false"><input type="checkbox" name="field.ok" value="true" checked>`)
	require.NotContains(t, page, "pwned")
	require.NotContains(t, page, "\x1b")
	require.NotContains(t, page, strings.Repeat("x", drive.MaxElicitDefault+1))

	// The person clears the name (it takes its default), leaves ttl out,
	// keeps the choice, and unchecks the box (an explicit false).
	m2 := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m2)
	form := url.Values{"csrf": {m2[1]}, "kind": {"question"}, "request": {w.RequestID}, "elicit": {"accept"},
		"field.name": {""}, "field.color": {"blue"}, "field.ok": {"false"}}
	resp, err = c.PostForm(f.http.URL+"/t/t1/answer", form)
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not go on after the answer")
	}
	a, err := facts.Decode[facts.QuestionAnswered](f.last("t1", facts.KindQuestionAnswered))
	require.NoError(t, err)
	require.JSONEq(t, `{"color":"blue","name":"Ana","ok":false,"ttl":300}`, string(a.Elicited.Content),
		"the answer recorded: the defaults taken, none of the hostile ones")
	c2, err := facts.Decode[facts.ActionCompleted](f.last("t1", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Contains(t, c2.Report.Stdout, `received accept {`)
	for _, kv := range []string{`"color":"blue"`, `"name":"Ana"`, `"ok":false`, `"ttl":300`} {
		require.Contains(t, c2.Report.Stdout, kv, "the server received the defaults taken")
	}
}
