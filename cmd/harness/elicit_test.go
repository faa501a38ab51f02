package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

// cmdRetry runs a command until it succeeds, for at most 30 s: retry
// command [args...]. Its last stdout and stderr are kept.
func cmdRetry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: retry command [args...]")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ts.Exec(args[0], args[1:]...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not succeed within 30s: %v", args[0], err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The terminal says a server's question as the server's, escaped: its
// message, its fields (a secret marked) and how to answer; no control
// sequence of the server's reaches the terminal.
func TestWriteAskedEscapes(t *testing.T) {
	var b strings.Builder
	writeAsked(&b, drive.Event{Kind: drive.EventAsked, Thread: "t1", ActionID: "1-a", Request: "1-a-e1",
		Text: "\x1b]0;pwned\x07Who\nare you?\x1b[2J",
		Elicit: &facts.Elicit{ActionID: "1-a", Server: "evil\x1b[31m", Sensitive: []string{"pass\x1b[0m"},
			Schema: facts.RawJSON(`{"type":"object","required":["name"],"properties":{"name":{"type":"string","title":"\u001b[2JName"},"pass\u001b[0m":{"type":"string"},"color":{"type":"string","enum":["red","blue"]}}}`)}})
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\x07")
	require.Contains(t, out, "the MCP server evil")
	require.Contains(t, out, "its words, not harness's")
	require.Contains(t, out, "field name (string, required)")
	require.Contains(t, out, "field color (string, one of red | blue)")
	require.Contains(t, out, "looks like a secret")
	require.Contains(t, out, "harness answer t1 --request 1-a-e1 --elicit accept")
	require.Equal(t, 7, strings.Count(out, "\n"), "one line each: the header, the message, three fields, the secret, how to answer: %q", out)
}
