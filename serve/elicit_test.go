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

// askServer is a go-sdk MCP server over streamable HTTP whose tool ask
// asks the person (elicitation) for a name, an age and a password, with a
// hostile message, and answers with what it received.
func askServer(t *testing.T) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "Ask the person."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "<script>alert(1)</script>\x1b[2JWho are you?",
				RequestedSchema: map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
					"name":     map[string]any{"type": "string", "title": "<b>Name</b>"},
					"age":      map[string]any{"type": "integer", "minimum": 0},
					"password": map[string]any{"type": "string"},
				}}})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil, nil
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("received %s %s", res.Action, b)}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

// A server's question during a call that another process holds (a run
// on a terminal) is shown on the page — the server's text escaped, the
// server named as the one who asks, its password field marked — and
// answered there; the API refuses input the schema does not take; the
// server receives the person's answer and the call goes on.
func TestPageAnswersAServersQuestion(t *testing.T) {
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
	f.stock, err = stock.NewStock(p, cfg, stock.WithMCP(ctx, mcp.Servers{"s": {URL: askServer(t)}}))
	require.NoError(t, err)
	f.serve()
	t.Cleanup(func() {
		f.close()
		f.stock.Close()
		require.NoError(t, store.Close())
	})

	// The process that holds the call: a run that approves it.
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
	require.Equal(t, "s", w.Elicit.Server)
	require.Equal(t, []string{"password"}, w.Elicit.Sensitive)

	c, get := f.browser(t)
	get("/?token=" + token)
	page := get("/t/t1")
	require.NotContains(t, page, "<script>alert")
	require.NotContains(t, page, "<b>Name</b>")
	require.NotContains(t, page, "\x1b")
	require.Contains(t, page, "Question from the MCP server <code>s</code>")
	require.Contains(t, page, "The text and the form below are the server's, not harness's")
	require.Contains(t, page, `asks for what looks like a secret (<code>password</code>)`)
	require.Contains(t, page, `name="field.password" type="password"`)
	require.Contains(t, page, `name="field.age"`)

	// The API refuses what the schema does not take, and text.
	for _, bad := range []string{
		fmt.Sprintf(`{"kind": "question", "request_id": %q, "elicit": "accept", "content": {"age": 3}}`, w.RequestID),
		fmt.Sprintf(`{"kind": "question", "request_id": %q, "elicit": "accept", "fields": {"name": "Ana", "age": "old"}}`, w.RequestID),
		fmt.Sprintf(`{"kind": "question", "request_id": %q, "elicit": "accept", "fields": {"name": "Ana", "shoe": "9"}}`, w.RequestID),
		fmt.Sprintf(`{"kind": "question", "request_id": %q, "text": "Ana"}`, w.RequestID),
		fmt.Sprintf(`{"kind": "question", "request_id": %q, "elicit": "maybe"}`, w.RequestID),
	} {
		resp, b := f.do("POST", "/api/threads/t1/answer", bad)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", bad, b)
	}

	m2 := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m2)
	form := url.Values{"csrf": {m2[1]}, "kind": {"question"}, "request": {w.RequestID}, "elicit": {"accept"},
		"field.name": {"Ana <3"}, "field.age": {"41"}, "field.password": {""}}
	resp, err := c.PostForm(f.http.URL+"/t/t1/answer", form)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
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
	require.Equal(t, "ana", a.By)
	c2, err := facts.Decode[facts.ActionCompleted](f.last("t1", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Contains(t, c2.Report.Stdout, `received accept {"age":41,"name":"Ana \u003c3"}`, "the server received the typed input")
	require.True(t, strings.HasPrefix(w.RequestID, "1-a"), w.RequestID)
}
