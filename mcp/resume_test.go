package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcp"
)

// resumableServer serves the test server over streamable HTTP with
// resumable streams (an event store); forget ends every session it
// knows, as a server restarted without them would.
func resumableServer(t *testing.T, dir string) (hs *httptest.Server, calls func() int64, forget func()) {
	srv, n := newTestServer(dir)
	handler := func() http.Handler {
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
			&sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)})
	}
	var h atomic.Value
	h.Store(handler())
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs, n.n.Load, func() { h.Store(handler()) }
}

// killWhileAsked runs the ask script in a harness of its own (the test
// binary), against the remote server at url, and SIGKILLs it once the
// server's question is recorded (its session is kept beside the person's
// tokens just before). config is $XDG_CONFIG_HOME, shared with the test.
func killWhileAsked(t *testing.T, root, config, url string) {
	t.Helper()
	servers, err := json.Marshal(mcp.Servers{"t": {URL: url}})
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	child := exec.Command(exe)
	child.Env = append(os.Environ(), childEnv+"="+root, childServersEnv+"="+string(servers), childScriptEnv+"="+askScript)
	var out harnesstest.LockedBuffer // read while the child writes
	child.Stdout, child.Stderr = &out, &out
	require.NoError(t, child.Start())
	deadline := time.Now().Add(30 * time.Second)
	for len(sessionFiles(t, config)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.NotEmpty(t, sessionFiles(t, config), "the child kept the session of the server's question: %s", out.String())
	waitAsked(t, &out)
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()
}

// sessionFiles are the sessions kept in the person's token store.
func sessionFiles(t *testing.T, config string) []string {
	m, err := filepath.Glob(filepath.Join(config, "harness", "mcp-tokens", "*.session-*.json"))
	require.NoError(t, err)
	return m
}

// A remote server asks its question during a call; the harness holding
// the call is SIGKILLed while the question waits. The next harness does
// not find the call in doubt: the thread still waits on the question
// (its record names the resumable session by digest only — the session
// id stays in the person's token store, 0600). A person answers; the
// resume delivers the answer in the session and reads the call's result
// on its stream again (Last-Event-ID): the server received the answer,
// the call completed with its result, the model went on, and the server
// was called once. The log verifies.
func TestElicitationAnsweredAfterARestartOverHTTP(t *testing.T) {
	ctx := context.Background()
	root, config := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	hs, calls, _ := resumableServer(t, root)
	killWhileAsked(t, root, config, hs.URL)
	require.Equal(t, int64(1), calls())

	e := newEnv(t, root, mcp.Servers{"t": {URL: hs.URL}}, askScript)
	asked := all[facts.QuestionAsked](e, "t1", facts.KindQuestionAsked)
	require.Len(t, asked, 1)
	r := asked[0].Elicit.Resume
	require.NotNil(t, r, "the question names its resumable session")
	require.Equal(t, hs.URL, r.URL)
	kept := sessionFiles(t, config)
	require.Len(t, kept, 1)
	info, err := os.Stat(kept[0])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	var session struct{ Session string }
	b, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &session))
	require.Equal(t, mcp.SessionDigest(session.Session), r.Session)
	for _, f := range e.log("t1") {
		require.NotContains(t, string(f.Data), session.Session, "no fact holds the session id")
	}

	st, err := drive.Inspect(ctx, e.thread("t1"))
	require.NoError(t, err)
	require.Empty(t, st.InDoubt, "the call goes on at the server")
	require.Len(t, st.Waits, 1, "the question is still asked")
	p := st.Waits[0]
	require.Equal(t, fold.WaitQuestion, p.Kind)
	require.Equal(t, asked[0].RequestID, p.RequestID)
	require.Equal(t, harness.StatusParked, e.run("t1", approveAll).Status, "nothing runs before the answer")

	_, err = drive.AnswerPending(ctx, e.thread("t1"), p, drive.Reply{Kind: fold.WaitQuestion, Elicit: facts.ElicitAccept,
		Content: json.RawMessage(`{"name":"Ana"}`), By: "ana"})
	require.NoError(t, err)
	st = e.run("t1", approveAll)
	require.Equal(t, harness.StatusDone, st.Status, st.Reason)

	completed := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, completed, 1)
	require.Equal(t, facts.StatusSucceeded, completed[0].Report.Status, completed[0].Report.Error)
	require.False(t, completed[0].Report.InDoubt)
	require.Contains(t, completed[0].Report.Stdout, `answered accept {"name":"Ana"}`, "the server received the answer")
	require.Empty(t, all[facts.ActionInterrupted](e, "t1", facts.KindActionInterrupted))
	require.Equal(t, int64(1), calls(), "the call was made once")
	require.Empty(t, sessionFiles(t, config), "the session is forgotten once the call ended")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))
}

// Where the server no longer knows the session (restarted), the answer
// cannot be delivered: the call is in doubt, saying so, and a person
// settles it; the answer stays recorded. The call is not made again.
func TestElicitationAfterARestartSessionGone(t *testing.T) {
	ctx := context.Background()
	root, config := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	hs, calls, forget := resumableServer(t, root)
	killWhileAsked(t, root, config, hs.URL)
	forget()

	e := newEnv(t, root, mcp.Servers{"t": {URL: hs.URL}}, askScript)
	st, err := drive.Inspect(ctx, e.thread("t1"))
	require.NoError(t, err)
	require.Len(t, st.Waits, 1)
	_, err = drive.AnswerPending(ctx, e.thread("t1"), st.Waits[0], drive.Reply{Kind: fold.WaitQuestion, Elicit: facts.ElicitAccept,
		Content: json.RawMessage(`{"name":"Ana"}`), By: "ana"})
	require.NoError(t, err)
	st = e.run("t1", approveAll)
	require.Equal(t, harness.StatusParked, st.Status, st.Reason)
	require.Len(t, st.Waits, 1)
	require.Equal(t, fold.WaitReconcile, st.Waits[0].Kind, "the call is in doubt")
	completed := all[facts.ActionCompleted](e, "t1", facts.KindActionCompleted)
	require.Len(t, completed, 1)
	require.True(t, completed[0].Report.InDoubt)
	require.Contains(t, completed[0].Report.Error, "no longer knows the session")
	require.Contains(t, completed[0].Report.Error, "not delivered")
	require.Len(t, all[facts.QuestionAnswered](e, "t1", facts.KindQuestionAnswered), 1, "the answer stays recorded")

	st = e.reconcile("t1", completed[0].ActionID, facts.DecisionAbandon)
	require.Equal(t, harness.StatusDone, st.Status, st.Reason)
	require.Equal(t, int64(1), calls())
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))
}

// While the process that makes the call lives, a question over a
// resumable session is answered as any other: the call is shown running
// (not in doubt, not waiting without a holder), the answer reaches the
// server through the live session, and the kept session is forgotten at
// the call's end.
func TestResumableQuestionWhileTheCallRuns(t *testing.T) {
	ctx := context.Background()
	root, config := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	hs, calls, _ := resumableServer(t, root)
	e := newEnv(t, root, mcp.Servers{"t": {URL: hs.URL}}, askScript)
	_, err := e.thread("t1").Start(ctx, "Use the tools.")
	require.NoError(t, err)
	done := make(chan drive.State, 1)
	go func() { done <- drive1(e, "t1") }()
	p := elicitWait(t, e, "t1", done) // the call is running
	require.NotNil(t, p.Elicit.Resume)
	require.Len(t, sessionFiles(t, config), 1)
	_, err = drive.AnswerPending(ctx, e.thread("t1"), p, drive.Reply{Kind: fold.WaitQuestion, Elicit: facts.ElicitDecline, By: "ana"})
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
	require.Contains(t, completed[0].Report.Stdout, "answered decline")
	require.Equal(t, int64(1), calls())
	require.Empty(t, sessionFiles(t, config), "the session is forgotten at the call's end")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.st.Actor, "t1"))
}
