// Package demo is the harness's main job end to end, offline: a coding
// thread on the embedded store with a scripted model parks on the
// confirmation of a write, is answered as a person would, and resumes; the
// runtime's observation and the declared check are recorded; four workers
// each report success for the same change, and their records show what the
// runtime could and could not confirm; last, the thread is replayed and
// verified. harness demo narrates it; Run gives every step to a Reporter.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// The demo's workspace: one file, and the request to change it.
const (
	demoFile   = "cache.toml"
	demoBefore = "ttl_seconds = 60\n"
	demoWant   = "ttl_seconds = 300\n"
	// Thread is the id of the demo's coding thread.
	Thread = "demo"
	// Prompt is what the demo's user asks.
	Prompt = "Set the cache TTL in cache.toml to 300 seconds."
)

// demoScript is the demo thread's scripted model: it writes the file, then
// says it is done.
const demoScript = `{"text": "The cache TTL is set in cache.toml; I'll set it to 300 seconds.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}], "usage": {"input_tokens": 1210, "output_tokens": 64}}
{"text": "Done: cache.toml now sets ttl_seconds = 300; the runtime observed the change and the declared check passed.", "usage": {"input_tokens": 1391, "output_tokens": 31}}
`

// workerScript is each worker thread's scripted model.
const workerScript = `{"text": "Setting the TTL.", "tool_calls": [{"id": "call_1", "name": "set_ttl", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}], "usage": {"input_tokens": 300, "output_tokens": 20}}
{"text": "Done.", "usage": {"input_tokens": 340, "output_tokens": 4}}
`

// Reporter receives what the demo does, as it happens. Everything it
// is given comes from the log: appended facts, folds of the log, audits.
type Reporter interface {
	// Workspace: the demo's workspace is ready; git tells whether it is a
	// git repository (git was found).
	Workspace(root string, git bool)
	// Fact: a fact was appended to a thread.
	Fact(f facts.Fact)
	// Parked: the demo thread waits for a person, as the log says.
	Parked(st drive.State)
	// Answered: the demo answered for the person; the fact is reported
	// with Fact.
	Answered(st drive.State)
	// Done: the demo thread is done.
	Done(st drive.State, record audit.Audit)
	// Workers: the four workers' records, from their logs.
	Workers(ws []Worker)
	// Verified: the demo thread's replay and its verification (nil when it
	// verifies).
	Verified(record audit.Audit, err error)
}

// Worker is one of the four workers of the demo, as its log records it.
type Worker struct {
	// Name is diligent, busy, idle or unwatched.
	Name string
	// Does says what the worker really does.
	Does string
	// Thread is the worker's thread.
	Thread string
	// Report is what the worker said.
	Report facts.Report
	// Observation, EffectState and Check are what the runtime recorded.
	Observation facts.Observation
	EffectState facts.EffectState
	Check       *facts.CheckRecorded
	// Status is how the worker's thread stands: the idle worker's unknown
	// effect parks it on reconcile.
	Status harness.Status
	Waits  []drive.Pending
}

// Options configure Demo.
type Options struct {
	// Dir is an empty (or missing) directory to make the demo in; the
	// workspace is Dir/workspace and the workers' workspaces are under
	// Dir/workers. A directory that holds anything is ErrDirNotEmpty.
	// "" makes it in a new temporary directory, removed when the demo
	// ends unless Keep.
	Dir  string
	Keep bool
	// Version names the program, for the record.
	Version string
	// Git, when set, is how the demo runs git to make its workspace a
	// repository with its file committed (harness demo gives the harness's
	// own safe git command); nil makes no repository.
	Git func(ctx context.Context, dir string, args ...string) (*exec.Cmd, error)
}

// Run is the harness's main job, end to end, on the embedded store with a
// scripted model and no network. In a git workspace holding cache.toml
// (ttl_seconds = 60) it starts a thread asking for 300, which parks on the
// confirmation of write_file; it answers the confirmation as a person
// would (confirmation.answered) and resumes: the tool runs, the runtime's
// observation and the declared check (pass) are recorded. Then four
// workers each report success for the same change — diligent, busy, idle
// and unwatched — and their records show what the runtime could and could
// not confirm. Last, the demo thread is replayed and verified. It returns
// the workspace root; the store is at root/.harness.
func Run(ctx context.Context, opts Options, r Reporter) (string, error) {
	if opts.Dir == "" {
		tmp, err := os.MkdirTemp("", "harness-demo-")
		if err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
		opts.Dir = tmp
		if !opts.Keep {
			defer os.RemoveAll(tmp)
		}
	} else if entries, err := os.ReadDir(opts.Dir); err == nil && len(entries) > 0 {
		return "", fmt.Errorf("demo: %s: %w", opts.Dir, ErrDirNotEmpty)
	}
	root := filepath.Join(opts.Dir, "workspace")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, demoFile), []byte(demoBefore), 0o644); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	git := gitInit(ctx, root, opts.Git)
	r.Workspace(root, git)

	place := stock.Place{Root: root, Store: filepath.Join(root, stock.StoreDir)}
	store, err := place.OpenStore(ctx, 0, true)
	if err != nil {
		return root, fmt.Errorf("demo: %w", err)
	}
	closeStore := store.Close // until the session has it
	defer func() {
		if closeStore != nil {
			closeStore()
		}
	}()
	scriptPath := filepath.Join(place.Store, "demo-script.jsonl")
	if err := os.WriteFile(scriptPath, []byte(demoScript), 0o644); err != nil {
		return root, fmt.Errorf("demo: %w", err)
	}
	spec := "scripted:" + scriptPath
	script, err := model.ParseScript(spec, []byte(demoScript))
	if err != nil {
		return root, fmt.Errorf("demo: %w", err)
	}
	version := opts.Version
	if version == "" {
		version = "harness/demo"
	}
	cfg, err := harness.NewConfig(harness.WithModelName(spec), func(c *harness.Config) { c.Version = version }, harness.WithModelBackoff(0))
	if err != nil {
		return root, err
	}
	st0, err := stock.NewStock(place, cfg)
	if err != nil {
		return root, err
	}
	session := stock.SessionOf(store, st0)
	closeStore = nil
	defer session.Close()
	var readErr error
	rt, _, err := session.Runtime(stock.WithModel(script), stock.Watching(func(f facts.Fact, err error) {
		if err != nil {
			readErr = err
			return
		}
		r.Fact(f)
	}))
	if err != nil {
		return root, err
	}

	// The thread asks for 300 and parks on the confirmation.
	th := rt.Thread(st0.Actor, Thread)
	if _, err := th.Start(ctx, Prompt); err != nil {
		return root, fmt.Errorf("demo: %w", err)
	}
	st, err := drive.Inspect(ctx, th)
	if err != nil {
		return root, err
	}
	if st.Status != harness.StatusParked || len(st.Waits) != 1 {
		return root, fmt.Errorf("demo: the thread should park on one confirmation; it is %s with %d waits", st.Status, len(st.Waits))
	}
	r.Parked(st)

	// A person approves exactly what they were shown; the thread goes on.
	w := st.Waits[0]
	if _, err := drive.AnswerPending(ctx, th, w, drive.Reply{Kind: w.Kind, Approved: true, By: "you (the demo answers for you)"}); err != nil {
		return root, fmt.Errorf("demo: %w", err)
	}
	if st, err = drive.Inspect(ctx, th); err != nil {
		return root, err
	}
	r.Answered(st)
	if _, err := th.Resume(ctx); err != nil {
		return root, fmt.Errorf("demo: %w", err)
	}
	if st, err = drive.Inspect(ctx, th); err != nil {
		return root, err
	}
	record, err := audit.Replay(ctx, store, st0.Actor, Thread)
	if err != nil {
		return root, err
	}
	r.Done(st, record)

	// Four workers report success for the same change.
	workers, err := runWorkers(ctx, store, place.Store, filepath.Join(opts.Dir, "workers"), version, r)
	if err != nil {
		return root, err
	}
	r.Workers(workers)

	// The demo thread's record, told back and checked.
	verr := audit.VerifyLog(ctx, store, st0.Actor, Thread)
	if record, err = audit.Replay(ctx, store, st0.Actor, Thread); err != nil {
		return root, err
	}
	r.Verified(record, verr)
	if readErr != nil {
		return root, readErr
	}
	return root, nil
}

// gitInit makes root a git repository with its files committed, if git is
// installed and the demo may run it; the demo works without it.
func gitInit(ctx context.Context, root string, gitCommand func(context.Context, string, ...string) (*exec.Cmd, error)) bool {
	if gitCommand == nil {
		return false
	}
	if _, err := exec.LookPath("git"); err != nil {
		return false
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=harness demo", "-c", "user.email=demo@harness.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "cache: ttl 60s"},
	} {
		cmd, err := gitCommand(ctx, root, args...)
		if err != nil {
			return false
		}
		if err := cmd.Run(); err != nil {
			return false
		}
	}
	return true
}

// demoWorker is an adapter that reports success whatever it did.
type demoWorker struct {
	name, does string
	do         func(root string) error
	watched    bool
}

var demoWorkerSet = []demoWorker{
	{name: "diligent", does: "writes cache.toml", watched: true, do: func(root string) error {
		return os.WriteFile(filepath.Join(root, demoFile), []byte(demoWant), 0o644)
	}},
	{name: "busy", does: "writes another file", watched: true, do: func(root string) error {
		return os.WriteFile(filepath.Join(root, "cache.toml.new"), []byte(demoWant), 0o644)
	}},
	{name: "idle", does: "writes nothing", watched: true, do: func(string) error { return nil }},
	{name: "unwatched", does: "writes cache.toml, with no observer", watched: false, do: func(root string) error {
		return os.WriteFile(filepath.Join(root, demoFile), []byte(demoWant), 0o644)
	}},
}

// runWorkers runs a thread per worker, each in its own workspace, on the
// demo's store (in the directory storeDir), and reads back what each log
// records.
func runWorkers(ctx context.Context, store thread.Store, storeDir, dir, version string, r Reporter) ([]Worker, error) {
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:workers"), func(c *harness.Config) { c.Version = version }, harness.WithModelBackoff(0))
	if err != nil {
		return nil, err
	}
	watch := stock.Watching(func(f facts.Fact, err error) {
		if err == nil {
			r.Fact(f)
		}
	})
	var out []Worker
	for _, w := range demoWorkerSet {
		root := filepath.Join(dir, w.name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(root, demoFile), []byte(demoBefore), 0o644); err != nil {
			return nil, err
		}
		tool := harness.Tool{
			Spec: facts.ToolSchema{Name: "set_ttl", Description: "Write a file (the demo's worker " + w.name + ").",
				Schema: facts.RawJSON(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
			Needs: action.Write,
			Ask:   action.AskNever,
			Run: func(context.Context, json.RawMessage) (facts.Report, error) {
				if err := w.do(root); err != nil {
					return facts.Report{}, err
				}
				return facts.Report{Status: facts.StatusSucceeded, Transcript: "set cache.toml to ttl_seconds = 300"}, nil
			},
			Declare: func(json.RawMessage) (*facts.CheckSpec, error) {
				c := action.FileEquals(demoFile, []byte(demoWant))
				return &c, nil
			},
		}
		tb, err := harness.NewToolbox(tool)
		if err != nil {
			return nil, err
		}
		actor, err := harness.CodingActor(cfg, tb)
		if err != nil {
			return nil, err
		}
		script, err := model.ParseScript("workers", []byte(workerScript))
		if err != nil {
			return nil, err
		}
		// The worker's own harness: its one tool, over its workspace.
		own := &stock.Stock{Place: stock.Place{Root: root, Store: storeDir, Exists: true}, Config: cfg, Toolbox: tb, Actor: actor}
		opts := []stock.RuntimeOption{stock.WithModel(script), watch}
		if !w.watched {
			opts = append(opts, stock.WithoutObserver())
		}
		rt, free, err := stock.SessionOf(store, own).Runtime(opts...)
		if err != nil {
			return nil, err
		}
		defer free()
		id := "worker-" + w.name
		if _, err := rt.Start(ctx, actor, id, "Set cache.toml to ttl_seconds = 300."); err != nil {
			return nil, fmt.Errorf("demo worker %s: %w", w.name, err)
		}
		rec := Worker{Name: w.name, Does: w.does, Thread: id}
		st, err := drive.Inspect(ctx, rt.Thread(actor, id))
		if err != nil {
			return nil, err
		}
		r, err := rt.Reading(ctx, actor, id)
		if err != nil {
			return nil, err
		}
		if acts := r.Actions(); len(acts) > 0 && acts[0].Completed != nil {
			a := acts[0]
			rec.Report, rec.Observation, rec.EffectState, rec.Check = a.Completed.Report, a.Completed.Observation, a.Completed.EffectState, a.Check
		}
		rec.Status, rec.Waits = st.Status, st.Waits
		if rec.EffectState == "" {
			return nil, errors.New("demo worker " + w.name + ": no action.completed in its log")
		}
		out = append(out, rec)
	}
	return out, nil
}
