package harnesstest_test

// Programs a Go engineer composing a harness would write, from the README,
// go doc and the Examples only (no unexported code): a custom tool, check,
// component and policy on the stock harness, served from one's own mux
// under a path prefix; concurrent resumes; a start on an existing id; a
// cancel while a tool runs; the zero values.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

func init() {
	// A check of one's own: the target holds a line, read from the file.
	action.RegisterCheck("heldout_has_line", func(_ context.Context, spec facts.CheckSpec, env action.CheckEnv) (bool, string, error) {
		b, err := os.ReadFile(filepath.Join(env.Root, spec.Target))
		return err == nil && strings.Contains(string(b), "\n"), "a line in " + spec.Target, nil
	})
}

// completions is a fold component of one's own: how many actions
// completed.
type completions struct{ n int }

func (c *completions) Name() string { return "completions" }
func (c *completions) Step(f facts.Fact) error {
	if f.Kind == facts.KindActionCompleted {
		c.n++
	}
	return nil
}
func (c *completions) Output() fold.Output[harness.Services] {
	return fold.Output[harness.Services]{View: c.n}
}

// noteTool appends a line to NOTES.md in root and declares the check.
func noteTool(root string) harness.Tool {
	return harness.Tool{
		Spec:  facts.ToolSchema{Name: "note", Description: "Add a line to NOTES.md."},
		Needs: action.Write,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			var a struct{ Line string }
			if err := json.Unmarshal(args, &a); err != nil {
				return facts.Report{}, err
			}
			f, err := os.OpenFile(filepath.Join(root, "NOTES.md"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return facts.Report{}, err
			}
			defer f.Close()
			_, err = f.WriteString(a.Line + "\n")
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "noted"}, err
		},
		Declare: func(json.RawMessage) (*facts.CheckSpec, error) {
			return &facts.CheckSpec{Name: "heldout_has_line", Target: "NOTES.md"}, nil
		},
	}
}

// The stock harness with a tool, a check and a fold component of one's
// own (stock.WithTools, stock.WithActor), served from one's own mux under
// /h/ with a Go policy: the server resumes the thread, the policy answers
// by its name, the check passes from the file, and the component's view
// is read from the thread's fold.
func TestHeldOutStockServedInOwnMux(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.HoldStore(ctx, 0, true)
	require.NoError(t, err)
	defer store.Close()
	script := harnesstest.Script(
		harnesstest.Act("Noting.", harnesstest.Call("n1", "note", `{"line": "ttl is 300"}`)),
		harnesstest.Say("Noted."))

	s, err := stock.NewStock(p, harness.Config{ModelName: "scripted"},
		stock.WithTools(noteTool(root)),
		stock.WithActor(func(cfg harness.Config, tools *harness.Toolbox) (harness.Actor, error) {
			return harness.Compose(cfg, harness.System(), harness.Tools(tools), harness.Budget(), harness.Compact(),
				harness.Infer(harness.Scheduler()), harness.Component(func() fold.Component[harness.Services] { return &completions{} }))
		}))
	require.NoError(t, err)
	defer s.Close()
	load := func(string) (model.Model, error) { return model.ParseScript("m", []byte(script)) }

	policy := drive.PolicyFunc("policy:notes", func(tool string, _ action.Capability, _ string) drive.Decision {
		if tool == "note" {
			return drive.Decision{Approved: true, Rule: "notes may be written"}
		}
		return drive.Decision{Ask: true}
	})
	srv, err := serve.New(serve.Options{Store: store, Stock: s, Tokens: []stock.ServeToken{{Name: "ana", Token: "secret-token-0123456789"}},
		Policy: policy, LoadModel: load})
	require.NoError(t, err)
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle("/h/", http.StripPrefix("/h", srv.Handler()))
	mux.HandleFunc("/mine", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "my own page") })
	hs := httptest.NewServer(mux)
	defer hs.Close()

	// Start the thread as a program does: it parks on the note.
	m, err := load("")
	require.NoError(t, err)
	svc, err := s.Services(m, stock.BlobsOf(store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(srv.Store(), svc, s.Config)
	require.NoError(t, err)
	out, err := rt.Thread(s.Actor, "t1").Start(ctx, "Note the TTL")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)

	call := func(method, path string) (int, string) {
		req, err := http.NewRequest(method, hs.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer secret-token-0123456789")
		resp, err := hs.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := call("GET", "/mine")
	require.Equal(t, 200, code)
	require.Equal(t, "my own page", body)
	code, body = call("POST", "/h/api/threads/t1/resume")
	require.Equal(t, http.StatusAccepted, code, body)
	deadline := time.Now().Add(20 * time.Second)
	var d serve.ThreadDetail
	for {
		code, body = call("GET", "/h/api/threads/t1")
		require.Equal(t, 200, code, body)
		d = serve.ThreadDetail{}
		require.NoError(t, json.Unmarshal([]byte(body), &d))
		if d.Status == harness.StatusDone && !d.Resuming {
			break
		}
		require.True(t, time.Now().Before(deadline), "never done: %s", body)
		time.Sleep(20 * time.Millisecond)
	}

	b, err := os.ReadFile(filepath.Join(root, "NOTES.md"))
	require.NoError(t, err)
	require.Equal(t, "ttl is 300\n", string(b))
	th := rt.Thread(s.Actor, "t1")
	n, err := harness.ViewAs[int](ctx, th, "completions")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = harness.ViewAs[string](ctx, th, "completions")
	require.ErrorIs(t, err, harness.ErrViewType)
	_, err = harness.ViewAs[int](ctx, th, "nobody")
	require.ErrorIs(t, err, harness.ErrNoComponent)

	var answered facts.ConfirmationAnswered
	var checked bool
	for f, err := range store.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		switch f.Kind {
		case facts.KindConfirmationAnswered:
			answered, err = facts.Decode[facts.ConfirmationAnswered](f)
			require.NoError(t, err)
		case facts.KindCheckRecorded:
			c, err := facts.Decode[facts.CheckRecorded](f)
			require.NoError(t, err)
			checked = c.Verdict == facts.VerdictPass
		}
	}
	require.Equal(t, "policy:notes", answered.By)
	require.Equal(t, "notes may be written", answered.Reason)
	require.True(t, checked, "the check passed")
}

// Several goroutines resume one thread at once, and start it at once: the
// tool runs once, one start wins, and each other start is
// ErrThreadExists or, through StartOrResume, a resume.
func TestHeldOutConcurrentResumes(t *testing.T) {
	env := harnesstest.New(t, harnesstest.ToolScript)
	ctx := context.Background()
	var starts, exists atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := env.Thread("t1").Start(ctx, "Set the cache TTL to 300")
			switch {
			case err == nil:
				starts.Add(1)
			case errors.Is(err, harness.ErrThreadExists):
				exists.Add(1)
			default:
				t.Errorf("start: %v", err)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(1), starts.Load())
	require.Equal(t, int64(7), exists.Load())
	_, err := env.Thread("t1").Start(ctx, "Something else")
	require.ErrorIs(t, err, harness.ErrThreadExists)
	_, err = env.Thread("t1").StartOrResume(ctx, "Something else")
	require.ErrorIs(t, err, harness.ErrThreadExists, "another first message is not dropped silently")
	out, err := env.Thread("t1").StartOrResume(ctx, "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)

	env.Approve("t1", out.Waits[0].RequestID, true)
	outs := make([]harness.Outcome, 8)
	for i := range outs {
		wg.Go(func() {
			o, err := env.Thread("t1").Resume(ctx)
			if err != nil {
				t.Errorf("resume: %v", err)
			}
			outs[i] = o
		})
	}
	wg.Wait()
	require.Equal(t, int64(1), env.Runs.Load(), "the tool ran once")
	o, err := env.Thread("t1").Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, o.Status)
}

// A Resume cancelled while a tool runs returns the context's error,
// records the call as interrupted, never as failed, and leaves the thread
// resumable; the next Resume tells the model.
func TestHeldOutCancelWhileAToolRuns(t *testing.T) {
	ctx := context.Background()
	entered := make(chan struct{})
	var once sync.Once
	tool := harness.Tool{
		Spec: facts.ToolSchema{Name: "wait"}, Needs: action.Read,
		Run: func(ctx context.Context, _ json.RawMessage) (facts.Report, error) {
			once.Do(func() { close(entered) })
			<-ctx.Done()
			return facts.Report{}, ctx.Err()
		},
	}
	tools, err := harness.NewToolbox(tool)
	require.NoError(t, err)
	var cfg harness.Config // the defaults
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	env := harnesstest.New(t, harnesstest.Script(harnesstest.Act("Waiting.", harnesstest.Call("w1", "wait", `{}`)), harnesstest.Say("Told.")))
	// The runtime observes a workspace: with nothing changed there, the
	// model is told of the interruption (unobserved, it would park on
	// reconcile, as after a crash).
	ws := t.TempDir()
	obs, err := action.NewWorkspace(ws)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(env.Store, harness.Services{Model: env.Model, Tools: tools, Observer: obs, Workspace: ws}, cfg)
	require.NoError(t, err)

	cctx, cancel := context.WithCancel(ctx)
	go func() { <-entered; cancel() }()
	_, err = rt.Thread(actor, "t1").Start(cctx, "Wait")
	require.ErrorIs(t, err, context.Canceled)
	kinds := env.Kinds("t1")
	require.Contains(t, kinds, facts.KindActionInterrupted)
	require.NotContains(t, kinds, facts.KindActionCompleted)

	out, err := rt.Thread(actor, "t1").Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, 2, env.Model.Calls())
	told, err := json.Marshal(env.Model.Last())
	require.NoError(t, err)
	require.Contains(t, string(told), "interrupted")
	require.NotContains(t, env.Kinds("t1"), facts.KindActionCompleted)
}

// A misspelled check fails the request before anyone is asked: nobody is
// asked, the tool never runs.
func TestHeldOutUnknownCheckBeforeTheEffect(t *testing.T) {
	var ran atomic.Int64
	tools, err := harness.NewToolbox(harness.Tool{
		Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			ran.Add(1)
			return facts.Report{Status: facts.StatusSucceeded}, nil
		},
		Declare: func(json.RawMessage) (*facts.CheckSpec, error) {
			return &facts.CheckSpec{Name: "heldout_has_lnie", Target: "NOTES.md"}, nil
		},
	})
	require.NoError(t, err)
	env := harnesstest.New(t, harnesstest.ToolScript)
	actor, err := harness.CodingActor(harness.Config{}, tools)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(env.Store, harness.Services{Model: env.Model, Tools: tools}, harness.Config{})
	require.NoError(t, err)
	out, err := rt.Thread(actor, "t1").Start(context.Background(), "Write")
	require.NoError(t, err)
	require.NotContains(t, env.Kinds("t1"), facts.KindConfirmationRequested)
	require.Zero(t, ran.Load())
	require.NotEqual(t, harness.StatusParked, out.Status, "%+v", out)
}

// A delegating tree parked on its child's confirmation lists that
// request, naming the child, and not the parent's wait for the child,
// which nobody can answer — in the outcome and in drive's state.
func TestHeldOutWaitsAreAnswerable(t *testing.T) {
	env := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	ctx := context.Background()
	out, err := env.Thread("p").Start(ctx, "Set the TTL through a child")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 1, "%+v", out.Waits)
	require.Equal(t, fold.WaitConfirmation, out.Waits[0].Kind)
	require.Equal(t, "p.1-d1", out.Waits[0].Thread)
	st, err := drive.Inspect(ctx, env.Thread("p"))
	require.NoError(t, err)
	for _, w := range st.Waits {
		require.NotEqual(t, fold.WaitChild, w.Kind, "%+v", st.Waits)
	}
	require.Len(t, st.Waits, 1)

	// Answered through the policy, to the child; the tree ends done.
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	st, err = drive.Drive(ctx, env.Thread("p"), drive.Options{Policy: all})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status, "%+v", st)
}
