package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/seed-7cc7a084/harness/facts"
)

// Capability is what an action needs the thread to have been granted:
// the one type of it, facts.Capability, as the facts record it.
type Capability = facts.Capability

// The capabilities.
const (
	Read    Capability = "read"
	Write   Capability = "write"
	Execute Capability = "execute"
)

// Request is a request to act, recorded before anything runs.
type Request struct {
	ActionID string
	// CallID is the model's tool call the action serves, if any.
	CallID      string
	Capability  Capability
	Instruction string
	// Precondition is the observed state hash the request expects to act
	// on; "" expects nothing.
	Precondition   string
	IdempotencyKey string
	// RequestedBy and ActorID attribute the request; they are strings, not
	// proof of who approved it.
	RequestedBy string
	ActorID     string
	// Adapter names the adapter; AdapterID names the instance, when one
	// adapter serves several.
	Adapter   string
	AdapterID string
	// Payload is the adapter's input, JSON.
	Payload json.RawMessage
	// Check is the declared check of the effect, if any.
	Check *facts.CheckSpec
	// Sandbox, for an action that runs a command, is where the command may
	// reach, as recorded with the request: the person who approved it saw
	// it, and the command runs in it (see package sandbox).
	Sandbox *facts.Sandbox
	// MCP, for a call to a tool of an MCP server, is the server, its tool,
	// the call's digest and the digest of the tool as the thread offered
	// it, as recorded with the request (see package mcp).
	MCP *facts.MCPCall
}

// Requester is who requested the action: RequestedBy, or the actor.
func (r Request) Requester() string {
	if r.RequestedBy != "" {
		return r.RequestedBy
	}
	return r.ActorID
}

// AdapterKey is the adapter instance: AdapterID, or the adapter's name.
func (r Request) AdapterKey() string {
	if r.AdapterID != "" {
		return r.AdapterID
	}
	return r.Adapter
}

// Fact returns the request as the payload of action.requested.
func (r Request) Fact() facts.ActionRequested {
	return facts.ActionRequested{
		ActionID: r.ActionID, CallID: r.CallID, Capability: r.Capability, Instruction: r.Instruction,
		Precondition: r.Precondition, IdempotencyKey: r.IdempotencyKey, RequestedBy: r.Requester(),
		ActorID: r.ActorID, Adapter: r.AdapterKey(), Payload: facts.RawJSON(r.Payload), Check: r.Check, Sandbox: r.Sandbox, MCP: r.MCP,
	}
}

// FromFact returns the request recorded in an action.requested payload.
func FromFact(p facts.ActionRequested) Request {
	return Request{
		ActionID: p.ActionID, CallID: p.CallID, Capability: p.Capability, Instruction: p.Instruction,
		Precondition: p.Precondition, IdempotencyKey: p.IdempotencyKey, RequestedBy: p.RequestedBy,
		ActorID: p.ActorID, Adapter: p.Adapter, Payload: json.RawMessage(p.Payload), Check: p.Check, Sandbox: p.Sandbox, MCP: p.MCP,
	}
}

// Adapter carries out requests: the place where side effects happen. Its
// return is a report — its own account, evidence of nothing but what it
// said.
type Adapter interface {
	Name() string
	Execute(ctx context.Context, req Request) (facts.Report, error)
}

// FileState is one path as an observer saw it.
type FileState struct {
	Path string // slash-separated, relative to the observed root
	// Digest is the SHA-256 of the content, hex; for a symlink, of the
	// link's target string; for a regular file larger than the
	// Workspace's hash limit, which it does not read, a stat digest (see
	// facts.StatDigestPrefix and WithHashLimit).
	Digest string
	Mode   fs.FileMode
	Size   int64
	// Link is a symlink's target, recorded and never followed.
	Link string
}

// Snapshot is what an observer read at one moment: every path in its scope,
// sorted by path, and the hash over the sorted (path, digest) list.
type Snapshot struct {
	Hash  string
	Files []FileState
	// tree, in a snapshot a Workspace gave the Boundary, is the reading
	// itself; Files is then nil (see Listing).
	tree *dirRec
}

// Observer reads the world independently of any adapter. The runtime calls
// it before and after an adapter runs; nothing an adapter returns can fill
// an observation.
type Observer interface {
	Observe(ctx context.Context) (Snapshot, error)
}

// Blobs keeps contents by digest: content-addressed, deduplicated. An
// observer that is given a Blobs keeps the bytes of the files it reads, so a
// replay can show a diff and an undo can restore a file.
type Blobs interface {
	// PutBlob stores data under its SHA-256 digest (hex); storing the same
	// bytes again does nothing.
	PutBlob(ctx context.Context, data []byte) (digest string, err error)
	// GetBlob returns the bytes with the digest, or an error matching
	// fs.ErrNotExist when none are kept (the content was larger than the
	// cap, or never read).
	GetBlob(ctx context.Context, digest string) ([]byte, error)
}

// ErrNoBlob is an error a Blobs may return for a digest it keeps nothing
// under; it matches fs.ErrNotExist, which is what callers check.
var ErrNoBlob = fmt.Errorf("no content kept for digest: %w", fs.ErrNotExist)
