package tell_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
)

// The server's question is said as the server's, escaped: its message,
// its fields and a word on what looks like a secret; no control sequence
// of the server's reaches the terminal.
func TestWriteAskedEscapes(t *testing.T) {
	var b strings.Builder
	tell.WriteAsked(&b, drive.Event{Kind: drive.EventAsked, Thread: "t1", ActionID: "1-a", Request: "1-a-e1",
		Text: "\x1b]0;pwned\x07Who\nare you?\x1b[2J",
		Elicit: &facts.Elicit{ActionID: "1-a", Server: "evil\x1b[31m", Sensitive: []string{"pass\x1b[0m"},
			Schema: facts.RawJSON(`{"type":"object","required":["name"],"properties":{"name":{"type":"string","title":"\u001b[2JName"},"pass\u001b[0m":{"type":"string"},"color":{"type":"string","enum":["red","blue"]}}}`)}})
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\x07")
	require.Contains(t, out, "field name (string, required)")
	require.Contains(t, out, "field color (string, one of red | blue)")
	require.Contains(t, out, "looks like a secret")
	require.Equal(t, 6, strings.Count(out, "\n"), "one line each: the header, the message, three fields, the secret: %q", out)
}

// A parked thread is told with what it waits for, each request with the
// command that answers it; what the model wrote (a tool name, arguments,
// a question) reaches the writer escaped, and paint colours only the
// harness's own words.
func TestTellerStateEscapesAndHints(t *testing.T) {
	var b strings.Builder
	paint := func(color, s string) string { return "<" + color + ">" + s + "</>" }
	st := drive.State{Thread: "t1", Status: "parked", Waits: []drive.Pending{
		{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-x;rm"}, Tool: "evil\x1b[2J", Args: `{"path":"a\u001b]0;t\u0007"}`, Reason: "loop\nguard"},
		{Wait: fold.Wait{Kind: fold.WaitQuestion, RequestID: "2-q", Summary: "Which\x1b[31m?"}, Options: []string{"a", "b\x07"}, AllowFreeText: true},
	}}
	st.Head.Seq = 7
	answer := func(id string, p drive.Pending) string { return "answer " + id + " " + drive.Ref(p) + "\x1b[2J" }
	tell.Teller{W: &b, Paint: paint, Answer: answer}.State(st, t.TempDir())
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\x07")
	require.Contains(t, out, "<yellow>parked:</> thread t1 waits for a person (seq 7)\n")
	require.Contains(t, out, `  confirmation 1-x;rm: evil\x1b[2J {"path":"a\u001b]0;t\u0007"}`)
	require.Contains(t, out, "<yellow>asked because</> loop")
	require.Contains(t, out, `    answer t1 1-x;rm\x1b[2J`+"\n", "the answer's command is said under its request, escaped")
	require.Contains(t, out, `  question 2-q: Which\x1b[31m?`)
	require.Contains(t, out, "(or any answer)")
	require.Contains(t, out, "    answer t1 2-q")
}

// A done thread says its turns and tokens, and what they cost, or that
// its model has no price; a thread a budget stopped says how to go on.
func TestTellerStateUsageAndGoOn(t *testing.T) {
	st := drive.State{Thread: "t1", Status: "done", Model: "openai:x\x1b[2J", Cost: &drive.Cost{UnpricedTurns: 2}}
	st.Head.Seq = 9
	st.View.Budget = &harness.BudgetView{Turns: 2, Tokens: 1500}
	require.Equal(t, `2 model turns, 1500 tokens (no price for openai:x\x1b[2J in the price table: tokens only)`, tell.Usage(st))
	st.Cost = &drive.Cost{USD: 0.0123, Tables: []string{"v1"}}
	var b strings.Builder
	tell.Teller{W: &b}.State(st, "")
	require.Equal(t, "done: thread t1 (seq 9) · 2 model turns, 1500 tokens, $0.01\n", b.String())

	st.View.Budget = &harness.BudgetView{Turns: 1}
	require.Equal(t, "1 model turn", tell.Usage(st))

	failed := drive.State{Thread: "t1", Status: harness.StatusFailed, Reason: "quota"}
	b.Reset()
	tell.Teller{W: &b, After: func(st drive.State) []string { return []string{"go on: " + st.Thread} }}.State(failed, "")
	require.Contains(t, b.String(), "\n    go on: t1\n")
}

// ShellWord quotes whatever a shell would read as more than one plain
// word.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"t1": "t1", "a/b.c:d@e%f+g=h,i-j": "a/b.c:d@e%f+g=h,i-j",
		"": "''", "a b": "'a b'", "$(id)": "'$(id)'", "it's": `'it'\''s'`, "a\nb": "'a\nb'",
	} {
		require.Equal(t, want, tell.ShellWord(in), "%q", in)
	}
}
