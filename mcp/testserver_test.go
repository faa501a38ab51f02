package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv makes the test binary an MCP server on stdio (see TestMain):
// "go" the go-sdk server of newTestServer, "malformed" one that answers
// calls with results that do not parse.
const serverEnv = "HARNESS_MCPTEST_SERVER"

// callsEnv names a file the server's hold tool appends a line to before it
// blocks, for the crash tests.
const callsEnv = "HARNESS_MCPTEST_CALLS"

func TestMain(m *testing.M) {
	if root := os.Getenv(childEnv); root != "" {
		os.Exit(runChild(root))
	}
	switch os.Getenv(serverEnv) {
	case "":
		os.Exit(m.Run())
	case "go":
		dir, _ := os.Getwd()
		srv, _ := newTestServer(dir)
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "malformed":
		os.Exit(serveMalformed())
	default:
		fmt.Fprintln(os.Stderr, "unknown", serverEnv)
		os.Exit(2)
	}
}

type textArgs struct {
	Text string `json:"text"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type noArgs struct{}

type bigArgs struct {
	KB int `json:"kb"`
}

// serverCalls counts the calls an in-process test server carried out.
type serverCalls struct{ n atomic.Int64 }

// newTestServer is an MCP server built with the go-sdk whose tools write
// under dir: echo (read-only), write, fail (isError), slow (never
// answers), crash (the process dies), mutate (changes echo's definition),
// drop (removes echo), image, big, hold (appends to $HARNESS_MCPTEST_CALLS,
// then never answers) and ask (appends likewise, then asks the person for
// a name and a password: elicitation).
func newTestServer(dir string) (*sdk.Server, *serverCalls) {
	calls := &serverCalls{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "harness-test-server", Version: "1"}, nil)
	count := func() { calls.n.Add(1) }
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Say the text back.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a textArgs) (*sdk.CallToolResult, any, error) {
			count()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Text}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "write", Description: "Write a file of the workspace."},
		func(_ context.Context, _ *sdk.CallToolRequest, a writeArgs) (*sdk.CallToolResult, any, error) {
			count()
			if err := os.WriteFile(filepath.Join(dir, a.Path), []byte(a.Content), 0o644); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path)}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Fail."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
			count()
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the widget is jammed"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "slow", Description: "Never answer."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
			count()
			// Not forever: the SDK's session close (the client's DELETE)
			// waits for running handlers, and this one's context is ended
			// only by the client's cancellation, which a loaded machine can
			// deliver after the DELETE — a deadlock until the test's own
			// timeout. Far past every timeout the tests give a call.
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(20 * time.Second):
				return nil, nil, errors.New("slow: gave up waiting to be cancelled")
			}
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "crash", Description: "Die."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "boom: the test server crashed on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "mutate", Description: "Change echo's definition."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			count()
			sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Say the text back, LOUDLY."},
				func(_ context.Context, _ *sdk.CallToolRequest, a textArgs) (*sdk.CallToolResult, any, error) {
					count()
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo changed"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "drop", Description: "Remove echo."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			count()
			srv.RemoveTools("echo")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo removed"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "image", Description: "Return a picture."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			count()
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a pixel"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG not really")},
			}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "big", Description: "Return kb kilobytes of text."},
		func(_ context.Context, _ *sdk.CallToolRequest, a bigArgs) (*sdk.CallToolResult, any, error) {
			count()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("0123456789abcdef", a.KB*64)}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "hold", Description: "Note the call, then never answer."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
			count()
			if f, err := os.OpenFile(os.Getenv(callsEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				fmt.Fprintln(f, "call")
				f.Close()
			}
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Description: "Ask the person for a name and a password, then say what they answered."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
			count()
			if f, err := os.OpenFile(os.Getenv(callsEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				fmt.Fprintln(f, "call")
				f.Close()
			}
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "\x1b]0;pwned\x07Who are you? <script>alert(1)</script>",
				RequestedSchema: map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
					"name":     map[string]any{"type": "string", "maxLength": 20},
					"password": map[string]any{"type": "string", "title": "Your password"},
				}}})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "elicit: " + err.Error()}}}, nil, nil
			}
			content, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("answered %s %s", res.Action, content)}}}, nil, nil
		})
	return srv, calls
}

// httpServer serves newTestServer over streamable HTTP.
func httpServer(t *testing.T, dir string) (*httptest.Server, *serverCalls) {
	srv, calls := newTestServer(dir)
	return httptestServer(t, srv, nil), calls
}

// httptestServer serves srv over streamable HTTP, telling each request to
// look, if set.
func httptestServer(t *testing.T, srv *sdk.Server, look func(*http.Request)) *httptest.Server {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if look != nil {
			look(r)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// serveMalformed is a server that speaks just enough JSON-RPC by hand to
// be connected and listed, and answers a call of "bad" with content of a
// type MCP does not have, and of "worse" with a result that is not an
// object.
func serveMalformed() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name            string `json:"name"`
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil {
			continue // a notification, or a response to a request of ours
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		switch msg.Method {
		case "initialize":
			reply["result"] = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "malformed", "version": "1"}}
		case "tools/list":
			reply["result"] = map[string]any{"tools": []any{
				map[string]any{"name": "bad", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "worse", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "odd", "inputSchema": map[string]any{"type": "string"}},
			}}
		case "tools/call":
			if msg.Params.Name == "worse" {
				reply["result"] = "not a result"
			} else {
				reply["result"] = map[string]any{"content": []any{map[string]any{"type": "hologram"}}}
			}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found: " + msg.Method}
		}
		if err := out.Encode(reply); err != nil {
			return 1
		}
	}
	return 0
}
