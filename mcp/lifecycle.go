package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// ProtocolVersion is the MCP protocol revision harness asks for as a
// client, pinned: the go-sdk's newest is a draft whose first request
// (server/discover) servers of 2025-11-25 refuse. A server may agree to an
// older revision the go-sdk speaks; the one agreed is in Status and in
// each call's record (facts.MCPCall.Protocol).
const ProtocolVersion = "2025-11-25"

// MaxRestarts bounds how many times a local server that ended is started
// again during one client's life (a command, a serve, a worker): past it,
// the calls of its tools fail, saying how it last ended.
const MaxRestarts = 3

// process is the local server's process now; nil for a remote one.
func (s *conn) process() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// revive starts a local server again that ended (it crashed, or was
// killed) since it connected, before a call of one of its tools: a new
// process, a new session, its tool list read again (a tool that is gone
// or defined otherwise is then refused as after list_changed). It
// returns what happened, for the call's record, or "" when the server
// was running; an error when it may not be started again (MaxRestarts)
// or could not be. A server the client closed is not revived.
func (s *conn) revive(ctx context.Context) (string, error) {
	p := s.process()
	if p == nil {
		return "", nil
	}
	if _, gone := p.exited(); !gone {
		return "", nil
	}
	s.reviving.Lock()
	defer s.reviving.Unlock()
	s.mu.Lock()
	p, n, closed := s.proc, s.restarts, s.closed
	s.mu.Unlock()
	if closed {
		return "", errors.New("the client was closed")
	}
	if _, gone := p.exited(); !gone {
		return "", nil // another call started it again meanwhile
	}
	how := p.describeExit()
	if n >= MaxRestarts {
		return "", fmt.Errorf("the server is gone: %s; it was started again %d times already, the most one session does", how, n)
	}
	s.listing.Lock()
	defer s.listing.Unlock()
	s.mu.Lock()
	old := s.session
	s.session, s.restarts, s.lastExit = nil, n+1, how
	s.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	cctx, cancel := context.WithTimeout(ctx, s.client.opts.ConnectTimeout)
	defer cancel()
	err := s.open(cctx)
	var listed map[string]string
	if err == nil {
		listed, err = s.digests(cctx)
	}
	if err != nil {
		s.mu.Lock()
		np, ns := s.proc, s.session
		s.mu.Unlock()
		if ns != nil {
			_ = ns.Close()
		}
		if np != nil && np != p {
			_ = np.close(2 * time.Second)
		}
		return "", fmt.Errorf("the server ended (%s) and could not be started again: %v", how, err)
	}
	s.mu.Lock()
	offered := map[string]string{}
	for _, t := range s.tools {
		offered[t.remote] = t.digest
	}
	s.current, s.stale = listed, false
	s.changed = !maps.Equal(listed, offered)
	s.mu.Unlock()
	return fmt.Sprintf("the server had ended (%s) and was started again before this call (restart %d of at most %d)", how, n+1, MaxRestarts), nil
}

// digests reads the server's tool list and returns the definition digest
// of each tool by its remote name.
func (s *conn) digests(ctx context.Context) (map[string]string, error) {
	listed, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	now := map[string]string{}
	for _, t := range listed {
		if schema, err := offeredSchema(s.name, t); err == nil {
			now[t.Name] = DefinitionDigest(schema)
		}
	}
	return now, nil
}
