package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/mcpserver"
)

// stdio is a server on a StdioTransport, driven with raw lines.
type stdio struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

func newStdio(t *testing.T) *stdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcpserver.NewServer(nil, mcpserver.ServerOptions{})
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), &mcpserver.StdioTransport{In: inR, Out: outW}) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // what the server still writes
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("the server did not end with its input")
		}
	})
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	return &stdio{t: t, in: inW, out: sc}
}

func (s *stdio) send(line string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, line)
	require.NoError(s.t, err)
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

func (s *stdio) next() reply {
	s.t.Helper()
	require.True(s.t, s.out.Scan(), "the server wrote nothing more: %v", s.out.Err())
	var r reply
	require.NoError(s.t, json.Unmarshal(s.out.Bytes(), &r), "%s", s.out.Text())
	return r
}

func (s *stdio) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	r := s.next()
	require.Nil(s.t, r.Error)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
}

// A line longer than MaxLine is answered with -32600 and skipped, never
// read whole; the line after it is read as usual.
func TestStdioLongLine(t *testing.T) {
	s := newStdio(t)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", mcpserver.MaxLine) + `"}}` + "\n")
	r := s.next()
	require.NotNil(t, r.Error)
	require.EqualValues(t, -32600, r.Error.Code)
	require.Equal(t, "null", string(r.ID))
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")
	require.Equal(t, "2", string(s.next().ID))
}

// A cancellation of a call already answered (or never made) silences
// nothing: a later call with the same id is answered.
func TestStdioStaleCancel(t *testing.T) {
	s := newStdio(t)
	s.initialize()
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}` + "\n")
	require.Equal(t, "5", string(s.next().ID))
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}` + "\n")
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never"}}` + "\n")
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}` + "\n")
	r := s.next()
	require.Equal(t, "5", string(r.ID))
	require.Contains(t, string(r.Result), `"start"`)
	// A response from the client to nothing the server asked, and blank
	// lines, are no reason to stop.
	s.send(`{"jsonrpc":"2.0","id":"x","result":{}}` + "\n\n   \n")
	s.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}` + "\n")
	require.Equal(t, "6", string(s.next().ID))
}
