package mcp_test

import (
	"context"

	"github.com/seed-7cc7a084/harness/action"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// env is the stock harness of a fresh workspace with MCP servers: a real
// Pebble store, the built-in tools and the servers' tools, the workspace
// observer, a scripted model.
type env struct {
	t     *testing.T
	root  string
	place stock.Place
	store thread.Store
	st    *stock.Stock
	rt    *harness.Runtime
	model model.Model
}

// newEnv makes the harness of root ("" for a new directory) with the
// servers, the model answering from script.
func newEnv(t *testing.T, root string, servers mcp.Servers, script string) *env {
	t.Helper()
	if root == "" {
		root = t.TempDir()
	}
	ctx := context.Background()
	place, err := locate(root)
	require.NoError(t, err)
	store, err := place.OpenStore(ctx, 10*time.Second, true)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"))
	require.NoError(t, err)
	st, err := newStock(place, cfg, servers)
	require.NoError(t, err)
	m, err := model.ParseScript("script", []byte(script))
	require.NoError(t, err)
	e := &env{t: t, root: place.Root, place: place, store: store, st: st, model: m}
	e.build(m)
	t.Cleanup(func() {
		e.close()
	})
	return e
}

func locate(root string) (stock.Place, error) { return stock.Locate(root, "") }

func newStock(place stock.Place, cfg harness.Config, servers mcp.Servers) (*stock.Stock, error) {
	return stock.NewStock(place, cfg, stock.WithMCP(context.Background(), servers))
}

func blobsOf(s thread.Store) action.Blobs { return stock.BlobsOf(s) }

// build makes the runtime with the model m.
func (e *env) build(m model.Model) {
	svc, err := e.st.Services(m, stock.BlobsOf(e.store))
	require.NoError(e.t, err)
	e.rt, err = harness.NewRuntime(e.store, svc, e.st.Config)
	require.NoError(e.t, err)
}

func (e *env) close() {
	if e.rt != nil {
		if c, ok := e.rt.Services.Observer.(io.Closer); ok {
			c.Close()
		}
	}
	if e.st != nil {
		e.st.Close()
	}
	if e.store != nil {
		e.store.Close()
	}
	e.rt, e.st, e.store = nil, nil, nil
}

func (e *env) thread(id string) *harness.Thread { return e.rt.Thread(e.st.Actor, id) }

// run starts thread id and drives it under the approval a, until it is
// done or waits for a person.
func (e *env) run(id string, a drive.Approval) drive.State {
	e.t.Helper()
	ctx := context.Background()
	th := e.thread(id)
	if _, err := e.store.Head(ctx, id); err != nil {
		_, err := th.Start(ctx, "Use the tools.")
		require.NoError(e.t, err)
	}
	st, err := drive.Drive(ctx, th, drive.Options{Approval: a})
	require.NoError(e.t, err)
	return st
}

// answer posts a person's answer to the confirmation the thread waits on
// and drives it on.
func (e *env) answer(id string, approved bool) drive.State {
	e.t.Helper()
	ctx := context.Background()
	th := e.thread(id)
	st, err := drive.Inspect(ctx, th)
	require.NoError(e.t, err)
	require.Len(e.t, st.Waits, 1, "one confirmation waits")
	w := st.Waits[0]
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{
		RequestID: w.RequestID, Approved: approved, By: "ana", Reason: "tested", Digest: w.Digest})
	require.NoError(e.t, err)
	_, err = drive.PostAnswer(ctx, th, d, drive.AnswerKey(facts.KindConfirmationAnswered, w.RequestID))
	require.NoError(e.t, err)
	st, err = drive.Drive(ctx, th, drive.Options{})
	require.NoError(e.t, err)
	return st
}

// reconcile settles the open action id with decision, as a person, and
// drives the thread on.
func (e *env) reconcile(id, actionID string, decision facts.Decision) drive.State {
	e.t.Helper()
	ctx := context.Background()
	th := e.thread(id)
	d, err := facts.NewDraft(facts.KindEffectReconciled, "", facts.EffectReconciled{ActionID: actionID, Decision: decision, By: "ana"})
	require.NoError(e.t, err)
	_, err = drive.PostAnswer(ctx, th, d, drive.AnswerKey(facts.KindEffectReconciled, actionID))
	require.NoError(e.t, err)
	st, err := drive.Drive(ctx, th, drive.Options{})
	require.NoError(e.t, err)
	return st
}

// log is the thread's facts.
func (e *env) log(id string) []facts.Fact {
	e.t.Helper()
	var out []facts.Fact
	for f, err := range e.store.Read(context.Background(), id, 0) {
		require.NoError(e.t, err)
		out = append(out, f)
	}
	return out
}

// all decodes every fact of kind in the thread's log.
func all[T any](e *env, id string, kind facts.Kind) []T {
	e.t.Helper()
	var out []T
	for _, f := range e.log(id) {
		if f.Kind == kind {
			p, err := facts.Decode[T](f)
			require.NoError(e.t, err)
			out = append(out, p)
		}
	}
	return out
}

// completion is the thread's only action.completed.
func (e *env) completion(id string) facts.ActionCompleted {
	e.t.Helper()
	done := all[facts.ActionCompleted](e, id, facts.KindActionCompleted)
	require.Len(e.t, done, 1)
	return done[0]
}

// stdioServer is the test binary re-executed as the go-sdk test server.
func stdioServer(t *testing.T) mcp.Server {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return mcp.Server{Command: exe, Env: map[string]string{serverEnv: "go"}}
}

// call is a script of one turn calling tool with args, then a last turn.
func call(tool, args string) string {
	return callEach([2]string{tool, args})
}

// callEach is a script of one turn per call, then a last turn.
func callEach(calls ...[2]string) string {
	var b strings.Builder
	for i, c := range calls {
		b.WriteString(`{"text": "calling", "tool_calls": [{"id": "c` + string(rune('1'+i)) + `", "name": ` + quote(c[0]) + `, "args": ` + quote(c[1]) + `}]}` + "\n")
	}
	b.WriteString(`{"text": "Done."}` + "\n")
	return b.String()
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
