package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// wireMsg is one JSON-RPC message harness mcp serve wrote.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wire is harness mcp serve on stdio, driven with raw lines.
type wire struct {
	t    *testing.T
	in   io.WriteCloser
	msgs chan wireMsg
	// seen are the messages read so far, in order.
	seen []wireMsg
}

func serveWire(t *testing.T, dir string, args ...string) *wire {
	t.Helper()
	cmd := exec.Command(harnessBin(t), append([]string{"mcp", "serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "USER=tester")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	w := &wire{t: t, in: in, msgs: make(chan wireMsg, 1024)}
	go func() {
		defer close(w.msgs)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m wireMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = wireMsg{Method: "not JSON: " + sc.Text()}
			}
			w.msgs <- m
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			require.NoError(t, err, "harness mcp serve ends cleanly when its input ends")
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Error("harness mcp serve did not end when its input ended")
		}
	})
	return w
}

func (w *wire) send(line string) {
	w.t.Helper()
	_, err := io.WriteString(w.in, line+"\n")
	require.NoError(w.t, err, "the server still reads its input")
}

// next is the next message the server writes.
func (w *wire) next() wireMsg {
	w.t.Helper()
	select {
	case m, ok := <-w.msgs:
		require.True(w.t, ok, "the server ended its output (it exited)")
		w.seen = append(w.seen, m)
		return m
	case <-time.After(2 * time.Minute):
		w.t.Fatal("no message from the server")
		return wireMsg{}
	}
}

// until reads messages until one satisfies ok, and returns it.
func (w *wire) until(ok func(wireMsg) bool) wireMsg {
	w.t.Helper()
	for {
		if m := w.next(); ok(m) {
			return m
		}
	}
}

// response reads messages until the response with the id (raw JSON).
func (w *wire) response(id string) wireMsg {
	w.t.Helper()
	return w.until(func(m wireMsg) bool { return m.Method == "" && string(m.ID) == id })
}

// ping checks that the server still answers.
func (w *wire) ping(id string) {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	m := w.next()
	require.Equal(w.t, id, string(m.ID), "the next message answers the ping")
	require.Nil(w.t, m.Error)
	require.JSONEq(w.t, `{}`, string(m.Result))
}

func (w *wire) initialize() wireMsg {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	m := w.response(`"init"`)
	require.Nil(w.t, m.Error)
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// Bad lines on stdio are answered by the server, each with its code and
// the id when it could be read (null otherwise), and the server keeps
// answering: a ping after each. A request before initialize is refused
// with -32600; ping is allowed. After initialize, methods of what the
// server does not declare (prompts, resources, completion) are not
// found, and the capabilities are exactly what it serves.
func TestMCPServeStdioBadLines(t *testing.T) {
	w := serveWire(t, t.TempDir())
	bad := []struct {
		name, line string
		code       int64
		id         string
	}{
		{"not JSON", `{"jsonrpc": "2.0", "id": 1, "method": "ping"`, -32700, "null"},
		{"garbage", `hello`, -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"not an object", `42`, -32600, "null"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":"a","method":"ping"}`, -32600, `"a"`},
		{"no jsonrpc", `{"id":8,"method":"ping"}`, -32600, "8"},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
		{"method a number", `{"jsonrpc":"2.0","id":9,"method":5}`, -32600, "9"},
		{"empty method", `{"jsonrpc":"2.0","id":10,"method":""}`, -32600, "10"},
		{"params a string", `{"jsonrpc":"2.0","id":11,"method":"ping","params":"x"}`, -32600, "11"},
		{"neither request nor response", `{"jsonrpc":"2.0","id":12}`, -32600, "12"},
		{"before initialize", `{"jsonrpc":"2.0","id":13,"method":"tools/list"}`, -32600, "13"},
		{"call before initialize", `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"view","arguments":{"thread":"t1"}}}`, -32600, `"c"`},
	}
	for i, c := range bad {
		w.send(c.line)
		m := w.next()
		require.NotNil(t, m.Error, "%s: %s gets an error", c.name, c.line)
		require.Equal(t, c.code, m.Error.Code, "%s: %s (%s)", c.name, c.line, m.Error.Message)
		require.Equal(t, c.id, string(m.ID), "%s: the id", c.name)
		w.ping(fmt.Sprintf(`"after-%d"`, i))
	}

	init := w.initialize()
	var res struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(init.Result, &res))
	require.Equal(t, "2025-11-25", res.ProtocolVersion)
	require.JSONEq(t, `{"tools":{},"logging":{},"resources":{"subscribe":true},"prompts":{}}`, string(res.Capabilities), "declared exactly as served")

	for i, method := range []string{"completion/complete", "no/such"} {
		id := fmt.Sprint(100 + i)
		w.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`)
		m := w.response(id)
		require.NotNil(t, m.Error, method)
		require.EqualValues(t, -32601, m.Error.Code, "%s: %s", method, m.Error.Message)
	}
	// Declared, so served: a list answers, a request without what it
	// needs is -32602.
	for i, method := range []string{"prompts/list", "resources/list", "resources/templates/list"} {
		id := fmt.Sprint(200 + i)
		w.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`)
		require.Nil(t, w.response(id).Error, method)
	}
	for i, method := range []string{"prompts/get", "resources/read", "resources/subscribe"} {
		id := fmt.Sprint(300 + i)
		w.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`)
		m := w.response(id)
		require.NotNil(t, m.Error, method)
		require.EqualValues(t, -32602, m.Error.Code, "%s: %s", method, m.Error.Message)
	}
	w.send(`{"jsonrpc":"2.0","id":"tl","method":"tools/list"}`)
	m := w.response(`"tl"`)
	require.Nil(t, m.Error)
	require.Contains(t, string(m.Result), `"name":"start"`)
	w.send(`{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}`)
	require.Nil(t, w.response(`"lv"`).Error)
	// Bad lines after initialize too.
	w.send(`{not json`)
	require.EqualValues(t, -32700, w.next().Error.Code)
	w.ping(`"last"`)
}

const cancelScript = `{"text": "Waiting.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"sleep 600\"}"}]}
{"text": "Done: the wait was interrupted."}
`

// A tools/call the client cancels gets no response: the running tool is
// cancelled (the log records action.interrupted), the server goes on
// answering, and the thread is left resumable: resume runs it to done.
// The thread's facts reach the client as log messages as they are
// appended.
func TestMCPServeStdioCancel(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": cancelScript})
	w := serveWire(t, dir, "--model", "scripted:script.jsonl", "--approve", "all")
	w.initialize()
	w.send(`{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}`)
	require.Nil(t, w.response(`"lv"`).Error)

	w.send(`{"jsonrpc":"2.0","id":"run","method":"tools/call","params":{"name":"start","arguments":{"task":"Wait a while"}}}`)
	logged := func(kind string) func(wireMsg) bool {
		return func(m wireMsg) bool {
			require.NotEqual(t, `"run"`, string(m.ID), "no response to the cancelled call: %s %s", m.Result, m.Error)
			if m.Method != "notifications/message" {
				return false
			}
			var p struct {
				Level  string `json:"level"`
				Logger string `json:"logger"`
				Data   struct {
					Thread, Kind, Text string
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &p))
			require.Equal(t, "harness", p.Logger)
			require.Equal(t, "t1", p.Data.Thread)
			return p.Data.Kind == kind
		}
	}
	w.until(logged("action.started"))
	w.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"run","reason":"the person changed their mind"}}`)
	w.until(logged("action.interrupted"))
	// Instead of a response, the client is told the thread is resumable,
	// and how, naming it.
	hint := w.until(func(m wireMsg) bool {
		require.NotEqual(t, `"run"`, string(m.ID), "no response to the cancelled call")
		return m.Method == "notifications/message" && strings.Contains(string(m.Params), "resumable")
	})
	require.Contains(t, string(hint.Params), `"level":"warning"`)
	require.Contains(t, string(hint.Params), "thread t1 is resumable: harness resume t1 (or with the resume tool)")
	w.ping(`"p1"`)

	call := func(id, tool, args string) wireMsg {
		w.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
		return w.until(func(m wireMsg) bool {
			require.NotEqual(t, `"run"`, string(m.ID), "no response to the cancelled call")
			return string(m.ID) == `"`+id+`"`
		})
	}
	m := call("facts", "facts", `{"thread":"t1"}`)
	require.Nil(t, m.Error)
	require.Contains(t, string(m.Result), `action.interrupted`)
	require.NotContains(t, string(m.Result), `action.completed`)

	m = call("resume", "resume", `{"thread":"t1"}`)
	require.Nil(t, m.Error)
	var res sdk.CallToolResult
	require.NoError(t, json.Unmarshal(m.Result, &res))
	require.False(t, res.IsError, "%s", m.Result)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var v tourView
	require.NoError(t, json.Unmarshal(raw, &v))
	require.Equal(t, "done", v.Status, "the cancelled thread was resumable: %s", raw)
	for _, m := range w.seen {
		require.NotEqual(t, `"run"`, string(m.ID))
	}
}

// harness mcp serve --http: streamable HTTP at the address printed,
// behind the page's token and Origin rules: a client with the token
// initializes, lists and calls tools; a request without the token, with
// a wrong one, or a post from another origin is refused.
func TestMCPServeHTTP(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": tourScript})
	url, token := serveHTTP(t, dir, "--model", "scripted:script.jsonl")

	// A client that claims to be someone else, in the header the server
	// uses and in the answer's by.
	cs := httpClient(t, url, token, "X-Harness-Person", "mallory")
	var v tourView
	text, isErr := callTool(t, cs, "start", map[string]any{"task": "Set the cache TTL to 300"}, &v)
	require.False(t, isErr, text)
	require.Equal(t, "parked", v.Status)
	w := v.Waits[0]
	require.Equal(t, "confirmation", w.Kind)
	text, isErr = callTool(t, cs, "answer", map[string]any{"thread": "t1", "request_id": w.RequestID, "approve": false, "digest": w.Digest, "by": "mallory"}, &v)
	require.False(t, isErr, text)
	require.Equal(t, "done", v.Status)
	text, isErr = callTool(t, cs, "facts", map[string]any{"thread": "t1"}, nil)
	require.False(t, isErr, text)
	who := (&app{getenv: os.Getenv}).whoami()
	require.Contains(t, text, `"by":"`+who+` (via mcp:http-client)"`, "the answer is the token's person's")
	require.NotContains(t, text, "mallory")

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(header map[string]string) (int, string) {
		req, err := http.NewRequest("POST", url, strings.NewReader(initialize))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, string(body)
	}
	code, body := post(nil)
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Contains(t, body, "no token")
	code, body = post(map[string]string{"Authorization": "Bearer " + strings.Repeat("x", 48)})
	require.Equal(t, http.StatusUnauthorized, code, body)
	code, body = post(map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example.com"})
	require.Equal(t, http.StatusForbidden, code, body)
	require.Contains(t, body, "another origin")
	code, body = post(map[string]string{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusForbidden, code, body)
	code, body = post(map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example.com"})
	require.Equal(t, http.StatusForbidden, code, "DNS rebinding: %s", body)
	code, body = post(map[string]string{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusOK, code, body)
	// The token in the address, for a client given only a URL.
	req, err := http.NewRequest("POST", url+"?token="+token, strings.NewReader(initialize))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// serveHTTP starts harness mcp serve --http on a free port in dir and
// returns the endpoint and the token it printed.
func serveHTTP(t testing.TB, dir string, args ...string) (url, token string) {
	t.Helper()
	url, token, _ = serveHTTPCmd(t, dir, args...)
	return url, token
}

// serveHTTPCmd is serveHTTP, with the server's process.
func serveHTTPCmd(t testing.TB, dir string, args ...string) (url, token string, _ *exec.Cmd) {
	t.Helper()
	bin, err := exec.LookPath("harness")
	require.NoError(t, err, "TestMain puts harness on $PATH")
	cmd := exec.Command(bin, append([]string{"mcp", "serve", "--http", "127.0.0.1:0", "-o", "json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "USER=tester")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
		}
	})
	var started struct {
		URL   string `json:"url"`
		Token string `json:"token"`
	}
	require.NoError(t, json.NewDecoder(out).Decode(&started), "the server says where it listens")
	require.True(t, strings.HasPrefix(started.URL, "http://127.0.0.1:") && strings.HasSuffix(started.URL, "/mcp"), started.URL)
	require.GreaterOrEqual(t, len(started.Token), 16)
	return started.URL, started.Token, cmd
}

// bearer adds the token to each request of a client, and, a client
// that lies, other headers.
type bearer struct {
	token string
	lie   map[string]string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	for k, v := range b.lie {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// httpClient connects a go-sdk client to url with the token (and the
// headers of lie).
func httpClient(t testing.TB, url, token string, lie ...string) *sdk.ClientSession {
	t.Helper()
	b := bearer{token: token, lie: map[string]string{}}
	for i := 0; i+1 < len(lie); i += 2 {
		b.lie[lie[i]] = lie[i+1]
	}
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: b}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}
