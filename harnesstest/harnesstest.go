// Package harnesstest has the harnesses the tests of the runtime, its front
// ends, its audit and its undo run on: real Pebble stores in the test's
// temporary directory, scripted models, tools that count their runs or
// write a real workspace that the runtime observes. Like
// net/http/httptest, it is for tests — of this module, and of harnesses
// composed from it.
package harnesstest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// Scripts for the harnesses: one decision a line, the Nth for the Nth
// model turn.
const (
	// TextScript answers with text: the thread is done in one turn.
	TextScript = `{"text": "Nothing to change."}`
	// ToolScript writes cache.toml (call_1), then says it is done.
	ToolScript = `{"text": "Setting the TTL.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done: the TTL is 300."}`
	// QuestionScript asks a person which file, then goes on.
	QuestionScript = `{"question": {"text": "Which file?", "options": ["a.toml", "b.toml"], "allow_free_text": true}}
{"text": "Using the file you named."}`
	// WriteScript writes cache.toml (call c), then says it is done twice.
	WriteScript = `{"text": "Setting the TTL.", "tool_calls": [{"id": "c", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done."}
{"text": "Done, again."}`
	// StockScript writes cache.toml with write_file and changes two files
	// with run_command, then says it is done.
	StockScript = `{"text": "Setting the TTL, then noting it.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}, {"id": "c", "name": "run_command", "args": "{\"command\":\"echo 'ttl is 300' >> notes.txt && echo new > made.txt\"}"}]}
{"text": "Done."}`
)

// Recording is a model that answers from a script and keeps every request.
type Recording struct {
	Script *model.Scripted
	mu     sync.Mutex // guards reqs
	reqs   []model.Request
}

// Turn answers from the script and keeps the request.
func (r *Recording) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Script.Turn(ctx, req)
}

// Calls is the number of turns taken.
func (r *Recording) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// Last is the last request.
func (r *Recording) Last() model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

// Env is a runtime on a real Pebble store with a scripted model and a
// toolbox of write_file and read_file, whose runs are counted (they write
// nothing).
type Env struct {
	T       T
	Store   *thread.PebbleStore
	Model   *Recording
	Runs    atomic.Int64
	RT      *harness.Runtime
	Actor   harness.Actor
	Toolbox *harness.Toolbox

	mu   sync.Mutex // guards args
	args []string
}

// New returns an Env whose model follows script (a Script, or JSON lines
// as model.ParseScript reads them), configured with opts. t is the test
// (or Run's T in an Example): the store is closed at its cleanup.
func New(t T, script string, opts ...harness.Option) *Env {
	t.Helper()
	s, err := model.ParseScript("test", []byte(script))
	require.NoError(t, err)
	e := &Env{T: t, Model: &Recording{Script: s}}
	e.Store, err = thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Store.Close()) })
	record := func(_ context.Context, args json.RawMessage) (facts.Report, error) {
		e.Runs.Add(1)
		e.mu.Lock()
		e.args = append(e.args, string(args))
		e.mu.Unlock()
		return facts.Report{Status: facts.StatusSucceeded, Stdout: "ok"}, nil
	}
	e.Toolbox, err = harness.NewToolbox(
		harness.Tool{Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Run: record},
		harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read, Run: record},
	)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(append([]harness.Option{harness.WithModelBackoff(0)}, opts...)...)
	require.NoError(t, err)
	e.Actor, err = harness.CodingActor(cfg, e.Toolbox)
	require.NoError(t, err)
	e.RT, err = harness.NewRuntime(e.Store, harness.Services{Model: e.Model, Tools: e.Toolbox}, cfg)
	require.NoError(t, err)
	return e
}

// Args are the arguments the tools ran with, in order.
func (e *Env) Args() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.args...)
}

// Thread is the thread id of the runtime, folded by the env's actor.
func (e *Env) Thread(id string) *harness.Thread { return e.RT.Thread(e.Actor, id) }

// Log is the thread's facts, in order.
func (e *Env) Log(id string) []facts.Fact {
	var out []facts.Fact
	for f, err := range e.Store.Read(context.Background(), id, 1) {
		require.NoError(e.T, err)
		out = append(out, f)
	}
	return out
}

// Kinds is the kinds of the thread's facts, in order.
func (e *Env) Kinds(id string) []facts.Kind {
	var out []facts.Kind
	for _, f := range e.Log(id) {
		out = append(out, f.Kind)
	}
	return out
}

// Last is the thread's last fact of kind.
func (e *Env) Last(id string, kind facts.Kind) facts.Fact {
	var found facts.Fact
	for _, f := range e.Log(id) {
		if f.Kind == kind {
			found = f
		}
	}
	require.NotZero(e.T, found.Seq, "no %s in %s", kind, id)
	return found
}

// Post posts a fact of kind with payload to the thread under key.
func (e *Env) Post(id string, kind facts.Kind, payload any, key string) (harness.Posted, error) {
	d, err := facts.NewDraft(kind, "", payload)
	require.NoError(e.T, err)
	return e.RT.Post(context.Background(), e.Actor, id, d, key)
}

// Approve answers the confirmation request of the thread, as ana.
func (e *Env) Approve(id, request string, approved bool) {
	_, err := e.Post(id, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: request, Approved: approved, By: "ana"}, "answer-"+request)
	require.NoError(e.T, err)
}

// Answer answers the question request of the thread with text, as ana.
func (e *Env) Answer(id, request, text string) {
	_, err := e.Post(id, facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: request, Text: text, By: "ana"}, "answer-"+request)
	require.NoError(e.T, err)
}

// Observed is an Env whose actions are observed in a real workspace
// holding cache.toml, with one tool, write_file, whose behaviour a test
// chooses (Write; Honest by default), and which declares file_equals.
type Observed struct {
	*Env
	Root  string
	Calls atomic.Int64
	Write func(root string, args json.RawMessage) (facts.Report, error)
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Honest writes what it was asked to.
func Honest(root string, raw json.RawMessage) (facts.Report, error) {
	var a writeArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return facts.Report{}, err
	}
	if err := os.WriteFile(filepath.Join(root, a.Path), []byte(a.Content), 0o644); err != nil {
		return facts.Report{}, err
	}
	return facts.Report{Status: facts.StatusSucceeded, Transcript: "wrote " + a.Path}, nil
}

// Idle says it wrote and did nothing.
func Idle(string, json.RawMessage) (facts.Report, error) {
	return facts.Report{Status: facts.StatusSucceeded, Transcript: "wrote cache.toml"}, nil
}

// NewObserved returns an Observed env whose model follows script.
func NewObserved(t T, script string, opts ...harness.Option) *Observed {
	t.Helper()
	o := &Observed{Env: New(t, script, opts...), Root: t.TempDir(), Write: Honest}
	require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	tool := harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file"},
		Needs: action.Write,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			o.Calls.Add(1)
			return o.Write(o.Root, args)
		},
		Declare: func(raw json.RawMessage) (*facts.CheckSpec, error) {
			var a writeArgs
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			c := action.FileEquals(a.Path, []byte(a.Content))
			return &c, nil
		},
	}
	tb, err := harness.NewToolbox(tool)
	require.NoError(t, err)
	ws, err := action.NewWorkspace(o.Root, action.WithBlobs(o.Store, 0))
	require.NoError(t, err)
	o.Actor, err = harness.CodingActor(o.RT.Config, tb)
	require.NoError(t, err)
	o.RT, err = harness.NewRuntime(o.Store, harness.Services{Model: o.Model, Tools: tb, Observer: ws, Workspace: o.Root, Blobs: o.Store}, o.RT.Config)
	require.NoError(t, err)
	return o
}

// StartApproved starts a thread and approves its one tool call.
func (o *Observed) StartApproved(id string) harness.Outcome {
	ctx := context.Background()
	out, err := o.RT.Start(ctx, o.Actor, id, "Set the cache TTL to 300")
	require.NoError(o.T, err)
	require.Equal(o.T, harness.StatusParked, out.Status)
	o.Approve(id, out.Waits[0].RequestID, true)
	out, err = o.RT.Resume(ctx, o.Actor, id)
	require.NoError(o.T, err)
	return out
}

// ResumeIntoTheWrite starts thread id, approves its write, and resumes it
// on another goroutine until the write is running; the write then waits
// until release is closed, and done has the Resume's error.
func (o *Observed) ResumeIntoTheWrite(id string) (done <-chan error, release chan struct{}) {
	ctx := context.Background()
	entered := make(chan struct{})
	release = make(chan struct{})
	o.Write = func(root string, args json.RawMessage) (facts.Report, error) {
		close(entered)
		<-release
		return Honest(root, args)
	}
	out, err := o.RT.Start(ctx, o.Actor, id, "Set the cache TTL to 300")
	require.NoError(o.T, err)
	o.Approve(id, out.Waits[0].RequestID, true)
	errs := make(chan error, 1)
	go func() { _, err := o.RT.Resume(ctx, o.Actor, id); errs <- err }()
	<-entered
	return errs, release
}

// DiedMidAct leaves thread id as a process that died mid-act would: its
// approved call 1-c has action.started, with the observation before, and
// the tool wrote content to cache.toml; nothing else. It returns the hash
// observed before.
func (o *Observed) DiedMidAct(id, content string) string {
	ctx := context.Background()
	head, err := o.Store.Head(ctx, id)
	require.NoError(o.T, err)
	ws, err := action.NewWorkspace(o.Root)
	require.NoError(o.T, err)
	snap, err := ws.Observe(ctx)
	require.NoError(o.T, err)
	d, err := facts.NewDraft(facts.KindActionStarted, "tool/start/1-c", facts.ActionStarted{ActionID: "1-c", ObservedBefore: snap.Hash})
	require.NoError(o.T, err)
	_, err = o.Store.Append(ctx, id, head.Seq, d)
	require.NoError(o.T, err)
	require.NoError(o.T, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte(content), 0o644))
	return snap.Hash
}

// Completion is the thread's last action.completed.
func (o *Observed) Completion(id string) facts.ActionCompleted {
	c, err := facts.Decode[facts.ActionCompleted](o.Last(id, facts.KindActionCompleted))
	require.NoError(o.T, err)
	return c
}

// Stock is the stock harness of a real workspace (holding cache.toml and
// notes.txt) on a real store: the built-in tools, and an observer that
// keeps file contents in the store. Watched are the facts appended, in
// order.
type Stock struct {
	T       T
	Root    string
	Store   *thread.PebbleStore
	Stock   *stock.Stock
	RT      *harness.Runtime
	Watched []facts.Fact
}

// NewStock returns the stock harness of a new workspace whose model
// follows script.
func NewStock(t T, script string) *Stock {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	for name, content := range map[string]string{"cache.toml": "ttl_seconds = 60\n", "notes.txt": "line one\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	m, err := model.ParseScript("stock", []byte(script))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:stock"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	e := &Stock{T: t, Root: root, Store: store.(*thread.PebbleStore)}
	e.Stock, err = stock.NewStock(p, cfg)
	require.NoError(t, err)
	svc, err := e.Stock.Services(m, stock.BlobsOf(store))
	require.NoError(t, err)
	require.NotNil(t, svc.Blobs, "the Pebble store keeps contents")
	e.RT, err = harness.NewRuntime(thread.Watch(store, func(f facts.Fact, err error) {
		require.NoError(t, err)
		e.Watched = append(e.Watched, f)
	}), svc, cfg)
	require.NoError(t, err)
	return e
}

// Thread is the thread id of the stock harness.
func (e *Stock) Thread(id string) *harness.Thread { return e.RT.Thread(e.Stock.Actor, id) }

// Read is the content of a file of the workspace, or "(absent)".
func (e *Stock) Read(name string) string {
	b, err := os.ReadFile(filepath.Join(e.Root, name))
	if os.IsNotExist(err) {
		return "(absent)"
	}
	require.NoError(e.T, err)
	return string(b)
}

// RunApproved starts a thread and answers every confirmation by approving
// it, the way --approve all does.
func (e *Stock) RunApproved(id string) drive.State {
	ctx := context.Background()
	th := e.Thread(id)
	_, err := th.Start(ctx, "Set the TTL and note it")
	require.NoError(e.T, err)
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(e.T, err)
	for {
		st, err := drive.Inspect(ctx, th)
		require.NoError(e.T, err)
		if st.Status != harness.StatusParked {
			return st
		}
		left, posted, err := drive.ApplyApproval(ctx, th, all, st.Waits)
		require.NoError(e.T, err)
		if posted == 0 {
			require.NotEmpty(e.T, left)
			return st
		}
		_, err = th.Resume(ctx)
		require.NoError(e.T, err)
	}
}

// LastFact is the thread's last fact.
func LastFact(t T, s thread.Store, id string) facts.Fact {
	var last facts.Fact
	for f, err := range s.Read(context.Background(), id, 1) {
		require.NoError(t, err)
		last = f
	}
	return last
}

// Leased is a real Pebble store that also leases threads, the way a store
// processes share does (thread.Leaser), with a lease the test can take
// away — as a lease that could not be renewed in time is.
type Leased struct {
	*thread.PebbleStore
	mu   sync.Mutex // guards lose
	lose context.CancelCauseFunc
	// LoseOnAppend loses the lease held when an append begins.
	LoseOnAppend bool
}

func (l *Leased) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	l.mu.Lock()
	if l.LoseOnAppend && l.lose != nil {
		l.lose(thread.ErrLeaseLost)
	}
	l.mu.Unlock()
	return l.PebbleStore.Append(ctx, id, after, drafts...)
}

func (l *Leased) Lease(ctx context.Context, id string) (context.Context, func(), error) {
	held, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	l.lose = cancel
	l.mu.Unlock()
	return held, func() { cancel(errors.New("released")) }, nil
}

// Took reports whether a lease was taken.
func (l *Leased) Took() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lose != nil
}

// LoseLease ends the lease held now with thread.ErrLeaseLost.
func (l *Leased) LoseLease() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lose(thread.ErrLeaseLost)
}

// Raw runs fn on the env's store as a raw Pebble database, as a disk or
// a person could change it: the store is closed for it and opened again,
// and Store and RT.Store are the new one. SnapshotKey names a snapshot's
// record in it.
func (e *Env) Raw(fn func(db *pebble.DB)) {
	e.T.Helper()
	dir := e.Store.Dir()
	require.NoError(e.T, e.Store.Close())
	db, err := pebble.Open(dir, &pebble.Options{Logger: quiet{}})
	require.NoError(e.T, err)
	fn(db)
	require.NoError(e.T, db.Close())
	e.Store, err = thread.OpenPebble(dir)
	require.NoError(e.T, err)
	e.RT.Store = e.Store
}

// SnapshotKey is the key of the thread's snapshot at seq, as thread's
// package comment documents it: 's', the thread id, 0x00, the seq as 8
// bytes big-endian.
func SnapshotKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(append([]byte{'s'}, id...), 0), seq)
}

// FactKey is the key of the thread's fact at seq, as thread's package
// comment documents it: 'f', the thread id, 0x00, the seq as 8 bytes
// big-endian. Its value is facts.Encode of the fact.
func FactKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(append([]byte{'f'}, id...), 0), seq)
}

// quiet is a Pebble logger that says nothing but a fatal error.
type quiet struct{}

func (quiet) Infof(string, ...any)           {}
func (quiet) Errorf(string, ...any)          {}
func (quiet) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
