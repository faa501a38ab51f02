package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// Resources from servers: the servers that declare resources are offered
// to the model through one tool, ReadResourceTool, with the server's name
// and a resource's URI (no URI: the server's list of resources). A read
// is a read action like any other — requested, decided by the same
// policy (the read capability: no person is asked by default), run
// through the boundary and reported with the server's answer kept — and
// is bounded (MaxResource). It reaches only a server the thread was
// offered (the tool's schema as the thread's system.configured recorded
// it names the server); a server the settings do not trust is read only
// at a URI it lists itself, so that the model cannot carry what it read
// elsewhere to the server in a URI of its own making without a person's
// word (a trusted server's templated URIs may be read).

// ReadResourceTool is the name of the tool that reads servers' resources.
const ReadResourceTool = "mcp_read_resource"

// Bounds of a resource read.
const (
	// MaxResource bounds the contents of one read, in bytes: a larger
	// resource is not taken.
	MaxResource = 1 << 20
	// MaxURI bounds a URI the model gives.
	MaxURI = 2 << 10
	// MaxListed bounds the resources of a server listed (a list, or the
	// check of an untrusted server's URI).
	MaxListed = 1000
)

// Remote names of what a resource tool's call asks a server, as its
// request records them (facts.MCPCall.Tool).
const (
	remoteRead = "resources/read"
	remoteList = "resources/list"
)

// resourceTool is ReadResourceTool: an action.Adapter of the runtime's
// toolbox, like a server's tool.
type resourceTool struct {
	c       *Client
	servers []*conn // those that declared resources, in name order
	schema  facts.ToolSchema
}

// resourceArgs are a call's arguments.
type resourceArgs struct {
	Server string `json:"server"`
	URI    string `json:"uri,omitempty"`
}

// resourceTool is the tool reading the resources of the connected servers
// that declared some, or nil when none did.
func (c *Client) resourceTool() *resourceTool {
	r := &resourceTool{c: c}
	var names []string
	for _, s := range c.servers {
		s.mu.Lock()
		ok := s.resources && s.err == nil
		s.mu.Unlock()
		if ok {
			r.servers = append(r.servers, s)
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	schema, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"required":             []string{"server"},
		"additionalProperties": false,
		"properties": map[string]any{
			"server": map[string]any{"type": "string", "enum": names, "description": "The MCP server whose resource to read."},
			"uri":    map[string]any{"type": "string", "description": "The resource's URI; leave it out for the server's list of resources."},
		},
	})
	r.schema = facts.ToolSchema{Name: ReadResourceTool, Schema: canonical(schema),
		Description: "Read a resource of a connected MCP server (its text; other contents by type and size). Without a uri, list the server's resources. " +
			"A server that is not trusted is read only at the URIs it lists."}
	return r
}

// Name is ReadResourceTool.
func (r *resourceTool) Name() string { return ReadResourceTool }

// Schema names the servers that may be read.
func (r *resourceTool) Schema() facts.ToolSchema {
	s := r.schema
	s.Schema = append(facts.RawJSON(nil), s.Schema...)
	return s
}

// Capability is read: a resource is data the server gives.
func (r *resourceTool) Capability() action.Capability { return action.Read }

// Confirm: a read asks nobody by default (the policy may say otherwise).
func (r *resourceTool) Confirm() bool { return false }

// Sandbox: the record of where a server runs is its tools'.
func (r *resourceTool) Sandbox() *facts.Sandbox { return nil }

// Unobserved: a local server's reads are observed as any action's.
func (r *resourceTool) Unobserved() bool { return false }

// Check: a read declares none.
func (r *resourceTool) Check(json.RawMessage) (*facts.CheckSpec, error) { return nil, nil }

// server is the connected server named, or nil.
func (r *resourceTool) server(name string) *conn {
	i := slices.IndexFunc(r.servers, func(s *conn) bool { return s.name == name })
	if i < 0 {
		return nil
	}
	return r.servers[i]
}

// MCPCall records the server a call reads and what it asks of it; the
// call is the thread's to make only when the tool as the thread was
// offered it names the server (else Offered is ""). Arguments that do not
// name a server record nothing (the call is then refused).
func (r *resourceTool) MCPCall(args string, offered *facts.ToolSchema) *facts.MCPCall {
	var a resourceArgs
	if json.Unmarshal([]byte(args), &a) != nil {
		return nil
	}
	s := r.server(a.Server)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	protocol := s.protocol
	s.mu.Unlock()
	c := &facts.MCPCall{Server: s.name, Tool: remoteRead, Transport: s.transport, Endpoint: s.endpoint,
		Digest: facts.CallDigest(ReadResourceTool, args), Protocol: protocol}
	if a.URI == "" {
		c.Tool = remoteList
	}
	if offered != nil && offersServer(*offered, s.name) {
		c.Offered = DefinitionDigest(*offered)
	}
	return c
}

// offersServer reports whether the tool's schema, as offered, names the
// server among those it reads.
func offersServer(t facts.ToolSchema, name string) bool {
	var s struct {
		Properties struct {
			Server struct {
				Enum []string `json:"enum"`
			} `json:"server"`
		} `json:"properties"`
	}
	return json.Unmarshal(t.Schema, &s) == nil && slices.Contains(s.Properties.Server.Enum, name)
}

// Execute reads the resource (or lists the server's resources). A read
// that is refused, fails or is over MaxResource is a failed report
// saying why.
func (r *resourceTool) Execute(ctx context.Context, req action.Request) (facts.Report, error) {
	if err := ctx.Err(); err != nil {
		return r.failed(facts.ClassCancelled, "not read: %v", err), err
	}
	var a resourceArgs
	if err := json.Unmarshal(req.Payload, &a); err != nil {
		return r.failed(facts.ClassNotFound, "not read: the arguments are not a JSON object with a server: %v", err), nil
	}
	s := r.server(a.Server)
	switch {
	case s == nil:
		return r.failed(facts.ClassNotFound, "not read: no connected server %q offers resources", a.Server), nil
	case req.MCP == nil || req.MCP.Server != s.name:
		return r.failed(facts.ClassNotFound, "not read: the request records no read of server %q", a.Server), nil
	case req.MCP.Offered == "":
		return r.failed(facts.ClassNotFound, "not read: the thread was not offered the resources of server %q (its system.configured does not name it)", a.Server), nil
	case len(a.URI) > MaxURI || !utf8.ValidString(a.URI):
		return r.failed(facts.ClassNotFound, "not read: the URI is over %d bytes or not UTF-8", MaxURI), nil
	}
	if _, err := s.revive(ctx); err != nil {
		return r.failed(facts.ClassTransport, "not read: %v", err), nil
	}
	s.mu.Lock()
	session := s.session
	s.mu.Unlock()
	if session == nil {
		return r.failed(facts.ClassTransport, "not read: the server is not connected"), nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var listed []*sdk.Resource
	if a.URI == "" || !s.cfg.Trusted {
		var err error
		if listed, err = listResources(cctx, session); err != nil {
			return r.readFailure(ctx, cctx, s, "its resources could not be listed", err), nil
		}
	}
	if a.URI == "" {
		return r.list(ctx, listed)
	}
	if !s.cfg.Trusted && !slices.ContainsFunc(listed, func(x *sdk.Resource) bool { return x.URI == a.URI }) {
		return r.failed(facts.ClassNotFound, "not read: server %q is not trusted, and %q is not a URI it lists (a trusted server's templated URIs may be read)", s.name, a.URI), nil
	}
	res, err := session.ReadResource(cctx, &sdk.ReadResourceParams{URI: a.URI})
	if err != nil {
		return r.readFailure(ctx, cctx, s, "the read failed", err), nil
	}
	size := 0
	var parts []string
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		size += len(c.Text) + len(c.Blob)
		head := fmt.Sprintf("[resource %s", c.URI)
		if c.MIMEType != "" {
			head += " " + c.MIMEType
		}
		if len(c.Blob) > 0 {
			head += fmt.Sprintf(", %d bytes", len(c.Blob))
		}
		parts = append(parts, head+"]")
		if c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	if size > MaxResource {
		return r.failed(facts.ClassInvalidOutput, "not taken: the resource's contents are %d bytes, over %d", size, MaxResource), nil
	}
	return r.kept(ctx, res, strings.Join(parts, "\n"))
}

// listResources reads the server's list of resources, page by page, up
// to MaxListed.
func listResources(ctx context.Context, session *sdk.ClientSession) ([]*sdk.Resource, error) {
	var out []*sdk.Resource
	for x, err := range session.Resources(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, x)
		if len(out) >= MaxListed {
			break
		}
	}
	return out, nil
}

// list is the report of a list of resources: one line each.
func (r *resourceTool) list(ctx context.Context, listed []*sdk.Resource) (facts.Report, error) {
	var b strings.Builder
	if len(listed) == 0 {
		b.WriteString("the server lists no resources\n")
	}
	for _, x := range listed {
		line := serverWord(x.URI, 2<<10)
		if x.Name != "" {
			line += " — " + serverWord(x.Name, 200)
		}
		if x.MIMEType != "" {
			line += " (" + serverWord(x.MIMEType, 100) + ")"
		}
		if x.Description != "" {
			line += ": " + serverWord(x.Description, 200)
		}
		b.WriteString(line + "\n")
	}
	return r.kept(ctx, &sdk.ListResourcesResult{Resources: listed}, b.String())
}

// kept is the report of what the server answered: its answer kept whole
// (in the store's blobs when large), text for the model.
func (r *resourceTool) kept(ctx context.Context, res any, text string) (facts.Report, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return r.failed(facts.ClassInvalidOutput, "the server's answer cannot be encoded again: %v", err), nil
	}
	kept := &facts.MCPResult{Size: len(raw)}
	if b := r.c.blobStore(); len(raw) > InlineResult && b != nil {
		if d, err := b.PutBlob(context.WithoutCancel(ctx), raw); err == nil {
			kept.Blob = d
		}
	}
	if kept.Blob == "" {
		kept.Result = canonical(raw)
	}
	return facts.Report{Status: facts.StatusSucceeded, Stdout: bound(text, ShownResult), MCP: kept}, nil
}

// readFailure is the report of a read that got no answer.
func (r *resourceTool) readFailure(ctx, cctx context.Context, s *conn, what string, err error) facts.Report {
	switch {
	case ctx.Err() != nil:
		return r.failed(facts.ClassCancelled, "%s: cancelled: %v", what, ctx.Err())
	case cctx.Err() != nil:
		return r.failed(facts.ClassTimeout, "%s: no answer within %v", what, s.timeout)
	}
	return r.failed(facts.ClassBusiness, "%s: %v", what, err)
}

// failed is a failed report of class saying why.
func (r *resourceTool) failed(class facts.ErrorClass, format string, args ...any) facts.Report {
	return facts.Report{Status: facts.StatusFailed, Error: ReadResourceTool + ": " + fmt.Sprintf(format, args...),
		MCP: &facts.MCPResult{Class: class}}
}
