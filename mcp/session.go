package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
)

// A remote server's question (elicitation/create) asked during a call
// over streamable HTTP can be answered after the process that made the
// call died, when the server keeps the session and its streams resumable
// (MCP 2025-11-25, "Resumability and Redelivery"): the answer is posted
// in the session, and the call's result is read on the call's stream
// again with Last-Event-ID (see resume.go). For that, the client watches
// its own HTTP exchanges (tap): the session id the server gave, the
// JSON-RPC id of each tools/call, and the SSE event that carried each
// question. The session id is kept beside the person's tokens (0600, in
// a directory every sandbox hides), named by its digest; facts record
// only the digest (facts.ElicitResume).

// maxTapEvent bounds an SSE event the tap reads: a question is bounded
// well below it (MaxElicitMessage, MaxElicitSchema); a larger event (a
// big result) is not a question and is not looked at.
const maxTapEvent = 64 << 10

// maxTapped bounds the questions the tap keeps unclaimed, and the events
// it remembers the call of.
const maxTapped = 128

// tapped is a server's question as the tap saw it on a stream.
type tapped struct {
	event   string          // the SSE event id that carried it
	request json.RawMessage // its JSON-RPC id
	call    json.RawMessage // the tools/call whose stream carried it
	message string
}

// tap is the HTTP transport of a connection to a remote server that
// watches its exchanges for what resuming a call needs.
type tap struct {
	next http.RoundTripper
	// mu guards session, callOf and asked.
	mu      sync.Mutex
	session string
	callOf  map[string]json.RawMessage // event id → call of its stream
	asked   []tapped
}

func newTap(next http.RoundTripper) *tap {
	return &tap{next: next, callOf: map[string]json.RawMessage{}}
}

func (t *tap) RoundTrip(r *http.Request) (*http.Response, error) {
	var call json.RawMessage
	switch {
	case r.Method == http.MethodPost && r.Body != nil && r.GetBody != nil:
		if body, err := r.GetBody(); err == nil {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.NewDecoder(io.LimitReader(body, MaxResponseBytes)).Decode(&msg) == nil && msg.Method == "tools/call" {
				call = msg.ID
			}
			body.Close()
		}
	case r.Method == http.MethodGet:
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			t.mu.Lock()
			call = t.callOf[last]
			t.mu.Unlock()
		}
	}
	res, err := t.next.RoundTrip(r)
	if err != nil {
		return res, err
	}
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		t.mu.Lock()
		t.session = id
		t.mu.Unlock()
	}
	if call != nil && res.Body != nil && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body = &tapBody{rc: res.Body, sse: sseReader{event: func(e sseEvent) { t.saw(call, e) }}}
	}
	return res, nil
}

// saw notes an event of the stream of call.
func (t *tap) saw(call json.RawMessage, e sseEvent) {
	if e.id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.callOf) >= maxTapped {
		clear(t.callOf)
	}
	t.callOf[e.id] = call
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if json.Unmarshal(e.data, &msg) != nil || msg.Method != "elicitation/create" || msg.ID == nil {
		return
	}
	if len(t.asked) >= maxTapped {
		t.asked = t.asked[1:]
	}
	t.asked = append(t.asked, tapped{event: e.id, request: msg.ID, call: call, message: msg.Params.Message})
}

// claim takes the question the tap saw with this message (the oldest),
// and returns it with the session id; ok is false when it saw none.
func (t *tap) claim(message string) (q tapped, session string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, a := range t.asked {
		if a.message == message {
			t.asked = append(t.asked[:i], t.asked[i+1:]...)
			return a, t.session, t.session != ""
		}
	}
	return tapped{}, "", false
}

// tapBody is a stream's body read through the tap's SSE reader.
type tapBody struct {
	rc  io.ReadCloser
	sse sseReader
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.sse.feed(p[:n])
	return n, err
}

func (b *tapBody) Close() error { return b.rc.Close() }

// sseEvent is one server-sent event: its id (the last one the stream
// gave, as the SSE standard keeps it), its data, and its retry field.
type sseEvent struct {
	id    string
	data  []byte
	retry string
}

// sseReader reads server-sent events from the bytes fed to it and calls
// event for each; an event over maxTapEvent is skipped.
type sseReader struct {
	event func(sseEvent)
	line  []byte
	id    string
	data  []byte
	retry string
	over  bool // the event is past maxTapEvent
	cr    bool // the last byte was a CR (a CRLF is one line end)
}

func (s *sseReader) feed(p []byte) {
	for _, c := range p {
		switch {
		case c == '\n' && s.cr:
			s.cr = false
		case c == '\n' || c == '\r':
			s.cr = c == '\r'
			s.endLine()
		default:
			s.cr = false
			if len(s.line) < maxTapEvent {
				s.line = append(s.line, c)
			} else {
				s.over = true
			}
		}
	}
}

func (s *sseReader) endLine() {
	line := s.line
	s.line = s.line[:0]
	if len(line) == 0 {
		if (len(s.data) > 0 || s.id != "") && !s.over {
			s.event(sseEvent{id: s.id, data: bytes.TrimSuffix(s.data, []byte("\n")), retry: s.retry})
		}
		s.data, s.retry, s.over = s.data[:0], "", false
		return
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "id":
		if !bytes.ContainsRune(value, 0) {
			s.id = string(value)
		}
	case "data":
		if len(s.data)+len(value) >= maxTapEvent {
			s.over = true
			return
		}
		s.data = append(append(s.data, value...), '\n')
	case "retry":
		s.retry = string(value)
	}
}

// sessionFile is the path of the kept session of the server at serverURL
// whose id has the hex SHA-256 digest.
func (s TokenStore) sessionFile(serverURL, digest string) (string, error) {
	if !isSessionName(digest) {
		return "", fmt.Errorf("%w: %q is not a session digest", ErrTokenStore, digest)
	}
	token, err := s.file(serverURL)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(token, ".json") + ".session-" + digest[:32] + ".json", nil
}

// SessionDigest is the hex SHA-256 of a session id.
func SessionDigest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// SaveSession keeps id, the id of a session with the server at serverURL,
// and returns its digest (SessionDigest).
func (s TokenStore) SaveSession(serverURL, id string) (string, error) {
	digest := SessionDigest(id)
	path, err := s.sessionFile(serverURL, digest)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(struct {
		Session string `json:"session"`
	}{id})
	if err != nil {
		return "", err
	}
	return digest, s.write(path, data)
}

// LoadSession returns the kept id of the session with the server at
// serverURL whose digest is digest.
func (s TokenStore) LoadSession(serverURL, digest string) (string, error) {
	path, err := s.sessionFile(serverURL, digest)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: no session %s… is kept for the server", ErrTokenStore, digest[:12])
	}
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	var kept struct {
		Session string `json:"session"`
	}
	if err := json.Unmarshal(data, &kept); err != nil || SessionDigest(kept.Session) != digest {
		return "", fmt.Errorf("%w: the file kept for the session %s… does not hold it", ErrTokenStore, digest[:12])
	}
	return kept.Session, nil
}

// DeleteSession forgets a kept session.
func (s TokenStore) DeleteSession(serverURL, digest string) error {
	path, err := s.sessionFile(serverURL, digest)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	return nil
}
