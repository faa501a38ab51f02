package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tell"
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

// The command the terminal suggests is safe to paste: the server names
// its fields and the model its call (in the request id), so each is one
// quoted word, never a command substitution the person's shell would
// run; a secret is read from stdin (NAME=-), off the command line other
// users' processes can read.
func TestWriteAskedHintIsPastable(t *testing.T) {
	var b strings.Builder
	writeAsked(&b, drive.Event{Kind: drive.EventAsked, Thread: "t1", ActionID: "1-a$(id)", Request: "1-a$(id)-e1",
		Text: "Who?", Elicit: &facts.Elicit{ActionID: "1-a$(id)", Server: "s", Sensitive: []string{"password"},
			Schema: facts.RawJSON(`{"type":"object","properties":{"a$(touch pwned)":{"type":"string"},"password":{"type":"string"}}}`)}})
	out := b.String()
	require.Contains(t, out, `--request '1-a$(id)-e1'`)
	require.Contains(t, out, `--field 'a$(touch pwned)'=…`)
	require.Contains(t, out, `--field password=-`)
	require.NotContains(t, out, "--field password=…")
}

// An answer's secret comes from stdin when asked (NAME=- or --content
// -), once, bounded.
func TestElicitReplyFromStdin(t *testing.T) {
	r, err := elicitReply("1-a-e1", "accept", "", []string{"name=Ana", "password=-"}, strings.NewReader("hunter2\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"name": "Ana", "password": "hunter2"}, r.Fields)

	r, err = elicitReply("1-a-e1", "accept", "-", nil, strings.NewReader(`{"password":"hunter2"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"password":"hunter2"}`, string(r.Content))

	_, err = elicitReply("1-a-e1", "accept", "", []string{"a=-", "b=-"}, strings.NewReader("x\n"))
	require.ErrorContains(t, err, "one value only")
	_, err = elicitReply("1-a-e1", "accept", "", []string{"a=-"}, strings.NewReader(strings.Repeat("x", drive.MaxStdinAnswer+1)))
	require.ErrorContains(t, err, "over")
}

// writeAsked writes the question e as the terminal says it: the
// question (tell.WriteAsked), then how to answer it (askedHint).
func writeAsked(w io.Writer, e drive.Event) {
	tell.WriteAsked(w, e)
	fmt.Fprintln(w, askedHint(e))
}
