package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one message on stdio: a longer line is answered with
// -32600 and skipped, never read whole.
const MaxLine = 4 << 20

// StdioTransport is MCP over newline-delimited JSON-RPC on In and Out, as
// the stdio transport of protocol revision 2025-11-25 says, with the
// connection answering what the server's SDK would not survive or would
// answer wrongly itself. A line that is not JSON gets -32700; one that is
// not a JSON-RPC 2.0 request, notification or response (a wrong or
// missing "jsonrpc", an id that is null, an object, an array or a
// fraction, a method that is not a string, params that are not
// structured, a batch: 2025-11-25 has no batching) gets -32600, with the
// id when it could be read and null otherwise; a request other than ping
// before initialize was answered gets -32600. None of them ends the
// connection: only the end of In does. A request the client cancelled
// (notifications/cancelled) gets no response, as the cancellation
// utility says, though the handler's context is cancelled as usual.
//
// One goroutine reads In; closing the connection does not interrupt a
// read in progress: that goroutine ends when In ends (a process's stdin
// ends with the process).
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
}

// Connect implements the SDK's Transport.
func (t *StdioTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &lineConn{out: t.Out, lines: make(chan line), done: make(chan struct{}),
		inflight: map[jsonrpc.ID]bool{}, cancelled: map[jsonrpc.ID]bool{}}
	go c.readLines(t.In)
	return c, nil
}

// line is one line of input, or the error that ended the input.
type line struct {
	data []byte
	long bool // longer than MaxLine: data is its start only
	err  error
}

// lineConn is one stdio connection.
type lineConn struct {
	out   io.Writer
	lines chan line
	done  chan struct{}
	once  sync.Once

	wmu sync.Mutex // guards writes to out: one message a line

	// mu guards the request bookkeeping: the calls read and not yet
	// answered, those of them the client cancelled, the initialize
	// call's id and whether it was answered.
	mu          sync.Mutex
	inflight    map[jsonrpc.ID]bool
	cancelled   map[jsonrpc.ID]bool
	initID      *jsonrpc.ID
	initialized bool
}

// readLines reads In a line at a time until it ends or the connection
// closes. Only this goroutine reads In.
func (c *lineConn) readLines(in io.Reader) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		var l line
		var err error
		for {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			if len(l.data)+len(chunk) > MaxLine {
				l.long, l.data = true, nil
			} else if !l.long {
				l.data = append(l.data, chunk...)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		// A last line without its newline is a line too.
		if (len(l.data) > 0 || l.long) && !c.send(l) {
			return
		}
		if err != nil {
			c.send(line{err: err})
			return
		}
	}
}

func (c *lineConn) send(l line) bool {
	select {
	case c.lines <- l:
		return true
	case <-c.done:
		return false
	}
}

// Read returns the next well-formed message, answering every malformed
// line itself on the way.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var l line
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, sdk.ErrConnectionClosed
		case l = <-c.lines:
		}
		if l.err != nil {
			return nil, l.err
		}
		if l.long {
			c.refuse(ctx, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("a message longer than %d bytes", MaxLine))
			continue
		}
		data := bytes.TrimSpace(l.data)
		if len(data) == 0 {
			continue
		}
		msg, id, code, why := parse(data)
		if code != 0 {
			c.refuse(ctx, id, code, why)
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok {
			switch c.admit(req) {
			case refused:
				c.refuse(ctx, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("%q before initialize: the session starts with initialize (only ping may come first)", req.Method))
				continue
			case dropped:
				continue
			}
		}
		return msg, nil
	}
}

// admission is what becomes of a request read.
type admission int

const (
	admitted admission = iota // the server sees it
	refused                   // answered with an error here
	dropped                   // nobody sees it
)

// admit keeps the bookkeeping of a request read, and says whether the
// server may see it: before initialize is answered, only initialize,
// ping and notifications. A cancellation of no call in flight (answered
// already, or never made) is dropped: passed on, the server could take
// it for a later call that reuses the id, read before the server
// handled the cancellation.
func (c *lineConn) admit(req *jsonrpc.Request) admission {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			var p struct {
				RequestID any `json:"requestId"`
			}
			id, err := jsonrpc.ID{}, error(nil)
			if err = json.Unmarshal(req.Params, &p); err == nil {
				id, err = jsonrpc.MakeID(p.RequestID)
			}
			if err != nil || !c.inflight[id] {
				return dropped
			}
			c.cancelled[id] = true
		}
		return admitted
	}
	switch {
	case req.Method == "initialize":
		id := req.ID
		c.initID = &id
	case req.Method == "ping" || c.initialized:
	default:
		return refused
	}
	c.inflight[req.ID] = true
	delete(c.cancelled, req.ID) // a new call with a cancelled one's id
	return admitted
}

// Write writes msg as one line, unless it is the response to a call the
// client cancelled.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		drop := c.cancelled[resp.ID]
		delete(c.cancelled, resp.ID)
		delete(c.inflight, resp.ID)
		if c.initID != nil && *c.initID == resp.ID && resp.Error == nil {
			c.initialized = true
		}
		c.mu.Unlock()
		if drop {
			return nil
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return c.writeLine(ctx, data)
}

func (c *lineConn) writeLine(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.done:
		return sdk.ErrConnectionClosed
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// refuse answers a malformed message: its id (raw JSON), or null.
func (c *lineConn) refuse(ctx context.Context, id json.RawMessage, code int64, why string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: why}})
	if err != nil {
		return // an id parse let through is valid JSON
	}
	_ = c.writeLine(ctx, data) // a failed write ends the connection at the server's next write
}

// Close ends the connection: a Read waiting returns.
func (c *lineConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

// SessionID implements the SDK's Connection: stdio has no session id.
func (c *lineConn) SessionID() string { return "" }

// parse reads one line as a JSON-RPC 2.0 message. A line that is not one
// returns the error code to answer with, why, and the message's id when
// it has a valid one (nil otherwise).
func parse(data []byte) (msg jsonrpc.Message, id json.RawMessage, code int64, why string) {
	if !json.Valid(data) {
		return nil, nil, jsonrpc.CodeParseError, "parse error: the line is not JSON"
	}
	switch data[0] {
	case '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "a batch (JSON array): protocol revision 2025-11-25 has no batching; send one message a line"
	case '{':
	default:
		return nil, nil, jsonrpc.CodeInvalidRequest, "not a JSON-RPC message: want an object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, nil, jsonrpc.CodeParseError, "parse error: " + err.Error()
	}
	if raw, ok := m["id"]; ok {
		if why := checkID(raw); why != "" {
			return nil, nil, jsonrpc.CodeInvalidRequest, why
		}
		id = raw
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return nil, id, jsonrpc.CodeInvalidRequest, `"jsonrpc" must be "2.0"`
	}
	if raw, ok := m["method"]; ok {
		var method string
		if err := json.Unmarshal(raw, &method); err != nil || method == "" {
			return nil, id, jsonrpc.CodeInvalidRequest, `"method" must be a non-empty string`
		}
		if p, ok := m["params"]; ok {
			if b := bytes.TrimSpace(p); len(b) == 0 || (b[0] != '{' && b[0] != '[') {
				return nil, id, jsonrpc.CodeInvalidRequest, `"params" must be an object`
			}
		}
	} else {
		_, result := m["result"]
		_, failed := m["error"]
		if id == nil || result == failed {
			return nil, id, jsonrpc.CodeInvalidRequest, `not a request (no "method") nor a response (an "id" and one of "result" or "error")`
		}
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid message: " + err.Error()
	}
	return msg, id, 0, ""
}

// checkID says what is wrong with a message's id, or "": MCP's ids are
// strings or integers, never null.
func checkID(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	switch {
	case len(b) == 0:
		return `"id" is empty`
	case b[0] == '"':
		return ""
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return `"id" is not a number`
		}
		if _, err := n.Int64(); err != nil {
			return `"id" must be a string or an integer`
		}
		return ""
	}
	return `"id" must be a string or an integer (not null, an object, an array or a boolean)`
}
