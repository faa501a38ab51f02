package facts

import (
	"errors"
	"fmt"
)

// The transports an MCPCall record names (see package mcp).
const (
	// MCPStdio: a local server, started by the harness as a command in
	// its sandbox and spoken to over its stdin and stdout. The workspace
	// observer watches what it does, as for any command.
	MCPStdio = "stdio"
	// MCPHTTP: a remote server, spoken to over streamable HTTP. Nobody can
	// look at what it does: the effect of its calls is reported, never
	// observed.
	MCPHTTP = "http"
)

// MCPCall is what action.requested records of a call to a tool of an MCP
// server, before it runs: which server and which of its tools, the digest
// a confirmation of the call is bound to, and the digest of the tool's
// definition as the thread offered it to the model, so a server that
// changed its tools since is found out before the call is made.
type MCPCall struct {
	// Server is the server's name in the settings (mcpServers).
	Server string `msgpack:"server,omitempty" json:"server,omitempty"`
	// Tool is the tool's own name on the server (the model calls it
	// mcp__<server>__<tool>).
	Tool string `msgpack:"tool,omitempty" json:"tool,omitempty"`
	// Transport is stdio or http.
	Transport string `msgpack:"transport,omitempty" json:"transport,omitempty"`
	// Endpoint says where the server is, for the record: the command line
	// of a stdio server, the URL of an http one (no header or environment
	// value is ever recorded: they hold credentials).
	Endpoint string `msgpack:"endpoint,omitempty" json:"endpoint,omitempty"`
	// Digest identifies the call exactly (the tool's name and the
	// arguments, byte for byte): the digest a confirmation shows and an
	// approval must name.
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Offered is the digest of the tool's definition (name, description,
	// input schema) as the thread's system.configured offered it to the
	// model; "" when the thread was never offered the tool.
	Offered string `msgpack:"offered,omitempty" json:"offered,omitempty"`
	// ReadOnly records that the server's readOnlyHint lowered the call to
	// the read capability without a confirmation, which only a server the
	// settings trust may do.
	ReadOnly bool `msgpack:"read_only,omitempty" json:"read_only,omitempty"`
	// Protocol is the MCP protocol revision the server agreed to when the
	// call was requested ("" in logs written before it was recorded).
	Protocol string `msgpack:"protocol,omitempty" json:"protocol,omitempty"`
}

// Validate requires the server, the tool and a known transport.
func (c MCPCall) Validate() error {
	return errors.Join(required("server", c.Server), required("tool", c.Tool), oneOf("transport", c.Transport, MCPStdio, MCPHTTP))
}

// MCPResult is what an MCP server answered to a call, kept whole on the
// report: the result as the server returned it (its content, its
// structured content, isError) or, for a call that got no result, the
// class of the failure.
type MCPResult struct {
	// IsError is the result's isError: the tool itself reports that the
	// call failed.
	IsError bool `msgpack:"is_error,omitempty" json:"is_error,omitempty"`
	// Result is the result's JSON, whole, when it is small; Blob, when it
	// is larger, is the SHA-256 (hex) of the same bytes kept in the
	// store's blobs. Size is its length either way.
	Result RawJSON `msgpack:"result,omitempty" json:"result,omitempty"`
	Blob   string  `msgpack:"blob,omitempty" json:"blob,omitempty"`
	Size   int     `msgpack:"size,omitempty" json:"size,omitempty"`
	// Class, for a call that got no result, says what the failure means:
	// timeout or transport (whether the server carried it out is unknown),
	// invalid_output (a malformed result), business (the server refused
	// it: a JSON-RPC error), not_found (the tool is gone or changed).
	Class ErrorClass `msgpack:"class,omitempty" json:"class,omitempty"`
	// Restart says that the local server had ended (how) and was started
	// again before this call was made; "" when it was running.
	Restart string `msgpack:"restart,omitempty" json:"restart,omitempty"`
}

// Validate requires a known class when one is set, and a size that is
// not negative.
func (r MCPResult) Validate() error {
	if r.Class != "" {
		if err := r.Class.Validate(); err != nil {
			return err
		}
	}
	if r.Size < 0 {
		return fmt.Errorf("size %d is negative", r.Size)
	}
	return nil
}
