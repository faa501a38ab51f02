package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// elicitWait waits (at most 30 s) until the thread waits on an MCP
// server's question, and returns it.
func elicitWait(t *testing.T, e *env, id string, done <-chan drive.State) drive.Pending {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st, err := drive.Inspect(context.Background(), e.thread(id))
		require.NoError(t, err)
		for _, w := range st.Waits {
			if w.Elicit != nil {
				require.Equal(t, []string{w.Elicit.ActionID}, st.Running, "the call runs while its server asks")
				return w
			}
		}
		select {
		case st := <-done:
			t.Fatalf("the thread ended without asking: %s %s", st.Status, st.Reason)
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, f := range e.log(id) {
		t.Logf("%d %s %s %s", f.Seq, f.Kind, f.Cause, f.Data)
	}
	st, err := drive.Inspect(context.Background(), e.thread(id))
	t.Logf("%+v %v", st.Waits, err)
	t.Fatal("no question from the server")
	return drive.Pending{}
}

// A server's question during a call (elicitation/create) puts the thread
// on a question wait while the call runs: the server's message and schema
// recorded as its word (a password-like field named as such), the call's
// tool shown with it. A text answer, input the schema refuses and a
// forged answer fact are refused; a person's accept with input reaches
// the server, which says it back in its result. The log verifies.
func TestElicitationAnsweredByAPerson(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			srv, _ := tr.server(t, root)
			if tr.name == "stdio" {
				srv.Env[callsEnv] = filepath.Join(root, "calls.txt")
			}
			e := newEnv(t, root, mcp.Servers{"t": srv}, call("mcp__t__ask", `{}`))
			_, err := e.thread("t1").Start(ctx, "Use the tools.")
			require.NoError(t, err)
			done := make(chan drive.State, 1)
			go func() { done <- drive1(e, "t1") }()
			p := elicitWait(t, e, "t1", done)

			require.Equal(t, fold.WaitQuestion, p.Kind)
			require.Equal(t, p.Elicit.ActionID+"-e1", p.RequestID)
			require.Equal(t, "t", p.Elicit.Server)
			t.Log(p.RequestID)
			require.Equal(t, "mcp__t__ask", p.Tool)
			require.Equal(t, []string{"password"}, p.Elicit.Sensitive)
			require.Contains(t, p.Summary, "\x1b]0;pwned", "the server's word is recorded as it said it; front ends escape it")
			require.JSONEq(t, `{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":20},"password":{"type":"string","title":"Your password"}}}`,
				string(p.Elicit.Schema))

			th := e.thread("t1")
			_, err = drive.AnswerPending(ctx, th, p, drive.Reply{Kind: fold.WaitQuestion, Text: "Ana", By: "ana"})
			require.ErrorIs(t, err, drive.ErrBadReply, "a server's form is not answered with text")
			for _, bad := range []string{`{"name":"` + strings.Repeat("x", 21) + `"}`, `{}`, `{"name":5}`, `["Ana"]`, `"Ana"`} {
				_, err = drive.AnswerPending(ctx, th, p, drive.Reply{Kind: fold.WaitQuestion, Elicit: facts.ElicitAccept, Content: json.RawMessage(bad), By: "ana"})
				require.ErrorIs(t, err, drive.ErrBadReply, bad)
			}
			// A front end that forges the fact past drive is refused by the
			// thread itself.
			forged, err := facts.NewDraft(facts.KindQuestionAnswered, "", facts.QuestionAnswered{RequestID: p.RequestID, By: "mallory",
				Elicited: &facts.Elicited{Action: facts.ElicitAccept, Content: facts.RawJSON(`{"name":5}`)}})
			require.NoError(t, err)
			_, err = th.Post(ctx, forged, "forged")
			require.ErrorIs(t, err, scheduler.ErrBadAnswer)
			text, err := facts.NewDraft(facts.KindQuestionAnswered, "", facts.QuestionAnswered{RequestID: p.RequestID, Text: "Ana", By: "mallory"})
			require.NoError(t, err)
			_, err = th.Post(ctx, text, "text")
			require.ErrorIs(t, err, scheduler.ErrBadAnswer)

			_, err = drive.AnswerPending(ctx, th, p, drive.Reply{Kind: fold.WaitQuestion, Elicit: facts.ElicitAccept,
				Content: json.RawMessage(`{"name":"Ana","password":"hunter2"}`), By: "ana"})
			require.NoError(t, err)
			var st drive.State
			select {
			case st = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the call did not go on after the answer")
			}
			require.Equal(t, harness.StatusDone, st.Status, st.Reason)
			completed := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
			require.Len(t, completed, 1)
			require.Equal(t, facts.StatusSucceeded, completed[0].Report.Status, completed[0].Report.Error)
			require.Contains(t, completed[0].Report.Stdout, `answered accept {"name":"Ana","password":"hunter2"}`, "the server received the answer")
			answered := all[facts.QuestionAnswered](e, "t1", facts.KindQuestionAnswered)
			require.Len(t, answered, 1)
			require.Equal(t, "ana", answered[0].By)
			require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))

			again, err := drive.Inspect(ctx, e.thread("t1"))
			require.NoError(t, err)
			require.Empty(t, again.Waits, "an answered question is not waited on")
		})
	}
}

// A person may decline: the server is told so, and nothing else.
func TestElicitationDeclined(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	hs, _ := httpServer(t, root)
	e := newEnv(t, root, mcp.Servers{"t": {URL: hs.URL}}, call("mcp__t__ask", `{}`))
	_, err := e.thread("t1").Start(ctx, "Use the tools.")
	require.NoError(t, err)
	done := make(chan drive.State, 1)
	go func() { done <- drive1(e, "t1") }()
	p := elicitWait(t, e, "t1", done)
	_, err = drive.AnswerPending(ctx, e.thread("t1"), p, drive.Reply{Kind: fold.WaitQuestion, Elicit: facts.ElicitDecline,
		Content: json.RawMessage(`{"name":"Ana"}`), By: "ana"})
	require.NoError(t, err)
	st := <-done
	require.Equal(t, harness.StatusDone, st.Status, st.Reason)
	completed := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Contains(t, completed[0].Report.Stdout, "answered decline null", "a decline carries no input")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))
}

const askScript = `{"text": "asking", "tool_calls": [{"id": "a", "name": "mcp__t__ask", "args": "{}"}]}
{"text": "Done."}
`

// A harness killed (SIGKILL) while a local server's question waits for a
// person: the server died with it (its stdin closed), so no answer can
// reach it. The next harness shows no question (nobody holds the call),
// finds the call in doubt and parks on reconcile; an answer to the
// question is refused; a person settles the call and the thread goes on.
// The server was called once.
func TestElicitationKilledOverStdio(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	marks := filepath.Join(root, "calls.txt")
	srv := stdioServer(t)
	srv.Env[callsEnv] = marks
	servers, err := json.Marshal(mcp.Servers{"t": srv})
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	child := exec.Command(exe)
	child.Env = append(os.Environ(), childEnv+"="+root, childServersEnv+"="+string(servers), childScriptEnv+"="+askScript)
	var out harnesstest.LockedBuffer // read while the child writes
	child.Stdout, child.Stderr = &out, &out
	require.NoError(t, child.Start())
	calls := func() int {
		b, _ := os.ReadFile(marks)
		return strings.Count(string(b), "call\n")
	}
	waitAsked(t, &out)
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()
	require.Equal(t, 1, calls(), "the child's call reached the server: %s", out.String())

	e := newEnv(t, root, mcp.Servers{"t": srv}, askScript)
	asked := all[facts.QuestionAsked](e, "t1", facts.KindQuestionAsked)
	require.Len(t, asked, 1, "the server's question was recorded before the kill: %s", out.String())
	require.NotNil(t, asked[0].Elicit)
	st, err := drive.Inspect(ctx, e.thread("t1"))
	require.NoError(t, err)
	require.Equal(t, []string{asked[0].Elicit.ActionID}, st.InDoubt)
	require.Empty(t, st.Waits, "nobody holds the call: its question is not offered")

	st = e.run("t1", approveAll)
	require.Equal(t, harness.StatusParked, st.Status)
	require.Len(t, st.Waits, 1)
	require.Equal(t, fold.WaitReconcile, st.Waits[0].Kind, "the call is in doubt")
	d, err := facts.NewDraft(facts.KindQuestionAnswered, "", facts.QuestionAnswered{RequestID: asked[0].RequestID, By: "ana",
		Elicited: &facts.Elicited{Action: facts.ElicitAccept, Content: facts.RawJSON(`{"name":"Ana"}`)}})
	require.NoError(t, err)
	_, err = e.thread("t1").Post(ctx, d, "late")
	require.ErrorIs(t, err, scheduler.ErrAnswered, "the call that asked has ended")

	st = e.reconcile("t1", asked[0].Elicit.ActionID, facts.DecisionAbandon)
	require.Equal(t, harness.StatusDone, st.Status, st.Reason)
	require.Equal(t, 1, calls(), "the call in doubt is not made again")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))
}

// drive1 drives the thread under approveAll, off the test's goroutine: a
// failure is the state's reason.
func drive1(e *env, id string) drive.State {
	st, err := drive.Drive(context.Background(), e.thread(id), drive.Options{Approval: approveAll})
	if err != nil {
		st.Status, st.Reason = harness.StatusFailed, err.Error()
	}
	return st
}

// A runtime in which nobody can answer (harness.Runtime.NoAsk: a run with
// no input on a store no other process shares) refuses a server's
// question at once: the server is told why, the call ends, the thread
// goes on. Before, such a run waited on the question forever
// (rev-readme14).
func TestElicitationRefusedWhereNobodyCanAnswer(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	hs, _ := httpServer(t, root)
	e := newEnv(t, root, mcp.Servers{"t": {URL: hs.URL}}, call("mcp__t__ask", `{}`))
	e.rt.NoAsk = "nobody is here"
	_, err := e.thread("t1").Start(ctx, "Use the tools.")
	require.NoError(t, err)
	done := make(chan drive.State, 1)
	go func() { done <- drive1(e, "t1") }()
	select {
	case st := <-done:
		require.Equal(t, harness.StatusDone, st.Status, st.Reason)
	case <-time.After(60 * time.Second):
		t.Fatal("the run waits on a question nobody can answer")
	}
	require.Empty(t, all[facts.QuestionAsked](e, "t1", facts.KindQuestionAsked), "not asked")
	completed := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Contains(t, completed[0].Report.Stdout+completed[0].Report.Error, "nobody is here")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))
}
