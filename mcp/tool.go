package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// tool is one tool of a server, a Tool: a call is an
// action like any other, requested, confirmed by the same policy, run
// through the boundary and reported with the server's answer kept whole.
type tool struct {
	c      *conn
	name   string // mcp__<server>__<tool>
	remote string // the tool's name on the server
	schema facts.ToolSchema
	digest string // DefinitionDigest(schema)
	// readOnlyHint is the server's annotation; readOnly is what it is
	// taken for: only a trusted server's hint lowers a tool to read.
	readOnlyHint bool
	readOnly     bool
	check        string
	// sandbox is where a local server runs, for the record; nil for a
	// remote one.
	sandbox *facts.Sandbox
}

// Name is mcp__<server>__<tool>.
func (t *tool) Name() string { return t.name }

// Schema is the tool as the model is shown it.
func (t *tool) Schema() facts.ToolSchema {
	s := t.schema
	s.Schema = append(facts.RawJSON(nil), s.Schema...)
	return s
}

// Capability is read for a trusted server's read-only tool, else execute:
// an MCP tool can do anything its server can.
func (t *tool) Capability() action.Capability {
	if t.readOnly {
		return action.Read
	}
	return action.Execute
}

// Confirm: every call asks a person, but a trusted server's read-only
// tool's.
func (t *tool) Confirm() bool { return !t.readOnly }

// Sandbox is where a local server runs (recorded on each request, shown
// at the approval); nil for a remote server.
func (t *tool) Sandbox() *facts.Sandbox {
	if t.sandbox == nil {
		return nil
	}
	r := *t.sandbox
	return &r
}

// Unobserved reports that a remote server's effects happen where the
// runtime cannot look: its calls' effects are reported, never observed.
func (t *tool) Unobserved() bool { return t.c.transport == facts.MCPHTTP }

// MCPCall is what a call's request records (see facts.MCPCall).
func (t *tool) MCPCall(args string, offered *facts.ToolSchema) *facts.MCPCall {
	t.c.mu.Lock()
	protocol := t.c.protocol
	t.c.mu.Unlock()
	c := &facts.MCPCall{Server: t.c.name, Tool: t.remote, Transport: t.c.transport, Endpoint: t.c.endpoint,
		Digest: facts.CallDigest(t.name, args), ReadOnly: t.readOnly, Protocol: protocol}
	if offered != nil {
		c.Offered = DefinitionDigest(*offered)
	}
	return c
}

// Check declares the check the settings give for the tool's calls, if any.
func (t *tool) Check(args json.RawMessage) (*facts.CheckSpec, error) {
	switch t.check {
	case "":
		return nil, nil
	case CheckFileEquals:
		var a struct {
			Path    *string `json:"path"`
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(args, &a); err != nil || a.Path == nil || a.Content == nil {
			return nil, fmt.Errorf("%s: check file_equals needs string arguments \"path\" and \"content\"", t.name)
		}
		rel, err := workspacePath(t.c.client.opts.Workspace, *a.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: check file_equals: %w", t.name, err)
		}
		spec := action.FileEquals(rel, []byte(*a.Content))
		return &spec, nil
	}
	return nil, fmt.Errorf("%s: unknown check %q", t.name, t.check)
}

// workspacePath is p (absolute, or relative to the workspace) as a
// slash-separated path inside the workspace.
func workspacePath(root, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	rel, err := filepath.Rel(root, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("path %q is outside the workspace %s", p, root)
	}
	return filepath.ToSlash(rel), nil
}

// Execute calls the tool with the request's arguments. Before the call is
// made it must be the one the thread was offered and a person approved:
// the request records the tool as the model was offered it, and a server
// that no longer lists the tool, or lists it changed, gets no call; a
// local server must run in the sandbox the request recorded. The report
// is the server's result kept whole; a server that is gone, does not
// answer within its timeout, answers with an error or with a result that
// does not parse is a failed report saying so, with the failure's class.
func (t *tool) Execute(ctx context.Context, req action.Request) (r facts.Report, _ error) {
	if err := ctx.Err(); err != nil {
		return t.failed(facts.ClassCancelled, "not called: %v", err), err
	}
	if why := t.refusal(req); why != "" {
		return t.failed(facts.ClassNotFound, "not called: %s", why), nil
	}
	restarted, err := t.c.revive(ctx)
	if err != nil {
		return t.failed(facts.ClassTransport, "not called: %v", err), nil
	}
	if restarted != "" {
		// The restart is the record of this call, whatever comes of it.
		defer func() {
			if r.MCP != nil {
				r.MCP.Restart = restarted
			}
		}()
	}
	t.c.mu.Lock()
	session := t.c.session
	t.c.mu.Unlock()
	if session == nil {
		return t.failed(facts.ClassTransport, "not called: the server is not connected"), nil
	}
	current, ok, err := t.c.definition(ctx, t.remote)
	switch {
	case err != nil:
		return t.transportFailure(ctx, "not called: its tool list could not be read again after it said the list changed", err), nil
	case !ok:
		return t.failed(facts.ClassNotFound, "not called: the server changed its tool list during the thread and no longer offers %q", t.remote), nil
	case current != req.MCP.Offered:
		return t.failed(facts.ClassNotFound, "not called: the server changed its tool list during the thread: %q is no longer the tool the thread was offered (definition %s, offered %s)",
			t.remote, short(current), short(req.MCP.Offered)), nil
	}
	// The call's timeout does not run while a person is asked the
	// server's question (see elicit): it starts again after the answer.
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	clock := time.AfterFunc(t.c.timeout, cancel)
	defer clock.Stop()
	f := &inflight{ctx: ctx, actionID: req.ActionID, ask: action.ElicitOf(ctx), sample: action.SampleOf(ctx),
		pause: func() func() {
			if !clock.Stop() {
				return func() {} // it ran out already
			}
			return func() { clock.Reset(t.c.timeout) }
		}}
	defer t.c.forget(f)
	defer t.c.calls.add(f)()
	res, err := session.CallTool(callCtx, &sdk.CallToolParams{Name: t.remote, Arguments: json.RawMessage(req.Payload)})
	if err != nil {
		if ctx.Err() != nil {
			return t.failed(facts.ClassCancelled, "the call was cancelled while the server worked on it: %v; whether it took effect is unknown", ctx.Err()), ctx.Err()
		}
		if callCtx.Err() != nil {
			return inDoubt(t.failed(facts.ClassTimeout, "no answer within %v: the call was cancelled; whether the server carried it out is unknown", t.c.timeout)), nil
		}
		return t.callFailure(ctx, err), nil
	}
	return t.report(ctx, res), nil
}

// refusal says why the request may not be carried out by this process's
// tool, or "".
func (t *tool) refusal(req action.Request) string {
	switch {
	case req.MCP == nil:
		return "the request records no MCP call (server, tool, digest)"
	case req.MCP.Server != t.c.name || req.MCP.Tool != t.remote:
		return fmt.Sprintf("the request is for tool %q of server %q", req.MCP.Tool, req.MCP.Server)
	case req.MCP.Offered == "":
		return fmt.Sprintf("the thread was never offered %s (its system.configured does not list it: the server was added after the thread started)", t.name)
	case req.Payload == nil:
		return "the arguments are not JSON"
	}
	if req.Sandbox != nil && t.sandbox != nil && (req.Sandbox.Mode != t.sandbox.Mode || req.Sandbox.Network != t.sandbox.Network) {
		return fmt.Sprintf("the request was approved to run in sandbox %s (network %v), and the server runs in %s (network %v); run the harness with the sandbox the request recorded",
			req.Sandbox.Mode, req.Sandbox.Network, t.sandbox.Mode, t.sandbox.Network)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(req.Payload, &obj) != nil {
		return "the arguments are not a JSON object"
	}
	return ""
}

// transportFailure is the report of a call that got no result: the
// server answered with a JSON-RPC error (business), its connection broke
// or its process ended (transport), or its answer does not parse
// (invalid_output).
func (t *tool) transportFailure(ctx context.Context, prefix string, err error) facts.Report {
	say := func(class facts.ErrorClass, format string, args ...any) facts.Report {
		msg := fmt.Sprintf(format, args...)
		if prefix != "" {
			msg = prefix + ": " + msg
		}
		return t.failed(class, "%s", msg)
	}
	if errors.Is(err, ErrLoginNeeded) {
		// The server refused the call's token (a scope it now asks
		// for, step-up): the call was not carried out.
		return say(facts.ClassPermission, "the server refused the call: %v", err)
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return say(facts.ClassBusiness, "the server answered with an error (code %d): %s", wire.Code, wire.Message)
	}
	if p := t.c.process(); p != nil {
		// A broken pipe or an end of input is the server dying: wait a
		// moment for its exit to say how.
		select {
		case <-p.done:
		case <-time.After(500 * time.Millisecond):
		}
		if _, gone := p.exited(); gone && !p.closed() {
			return say(facts.ClassTransport, "the server died during the call: %s; whether it carried the call out is unknown", p.describeExit())
		}
	}
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return say(facts.ClassTransport, "the connection to the server broke: %v; whether it carried the call out is unknown", err)
	}
	if malformed(err) {
		return say(facts.ClassInvalidOutput, "the server's result is malformed: %v", err)
	}
	return say(facts.ClassTransport, "%v; whether the server carried the call out is unknown", err)
}

// callFailure is the report of a call that was made and got no result:
// transportFailure's, in doubt (facts.Report.InDoubt) when the server
// may have carried it out — its connection broke or it died during the
// call — so that a person settles it, as after a crash.
func (t *tool) callFailure(ctx context.Context, err error) facts.Report {
	r := t.transportFailure(ctx, "", err)
	if r.MCP != nil && r.MCP.Class == facts.ClassTransport {
		r = inDoubt(r)
	}
	return r
}

// inDoubt marks r in doubt: whether the call took effect is unknown.
func inDoubt(r facts.Report) facts.Report {
	r.InDoubt = true
	return r
}

// malformed reports whether err says a result could not be read.
func malformed(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"invalid content type", "unrecognized content type", "content type", "unmarshal", "cannot unmarshal", "invalid character", "nil content", "unexpected end of JSON"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// failed is a failed report of the tool, with the class of the failure.
func (t *tool) failed(class facts.ErrorClass, format string, args ...any) facts.Report {
	return facts.Report{Status: facts.StatusFailed, Error: t.name + ": " + fmt.Sprintf(format, args...),
		MCP: &facts.MCPResult{Class: class}}
}

// short is the first 12 hex digits of a digest.
func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
