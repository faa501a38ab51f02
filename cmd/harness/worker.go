package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/worker"
)

func (a *app) workerCmd() *cobra.Command {
	var (
		f           driveFlags
		concurrency int
		drain       time.Duration
		index       bool
	)
	cmd := &cobra.Command{
		Use:   "worker [--store nats://HOST:PORT|DIR] [flags]",
		Short: "Drive the runnable threads of a shared store, with the other workers on it, until stopped",
		Long: `Drive the threads of a store that machines share (a NATS server, or a cluster:
--store nats://a:4222,nats://b:4222,nats://c:4222), or of a store in a
directory that harness serve holds (the worker takes its work through the
server's socket, beside the server, which drives submitted threads too; see
harness serve --drive; with no server the worker says to start one): those started for the
workers (harness submit, or run --detach), answered (approve, deny, answer,
post), or handed over by a worker that stopped or died. Each runs under its
lease, on one worker at a time, in this workspace; --concurrency threads at once.

Nobody is asked anything. A thread that records a policy of its own (what it was
started or submitted with, a person's "always for this thread") is decided by it,
and this worker's flags change it as they would for harness resume: --approve
replaces its mode, --allow and --deny add patterns (not recorded: the flags are
the worker's). A thread that records none is decided by --approve, --allow and
--deny and the settings file. A thread that needs a person parks until someone
answers it from anywhere, then a worker takes it up again. A parked thread costs
the workers nothing.

A thread's model is the one it recorded; --model is the model of threads that
recorded none yet (or the settings file's "model").

A worker that dies leaves its threads to the others once its jobs are given out
again (after 30s) and its leases have run out (15s): an action it was running is then in doubt, recorded as interrupted and
never run again, and its thread parks on reconcile. SIGTERM or Ctrl-C drains:
no new threads; each drive stops before its next step (a tool that is running
runs to its end) and is handed over at once. What has not stopped after --drain
is interrupted; a second signal interrupts at once.

Each event is a line on stdout (with -o json, a JSON object per line).

In a git repository each thread works in a git worktree of its own (branch
harness/<thread id>, under the cache directory), recorded on its
system.configured; when it ends its work is committed to that branch
(worktree.finished) and the worktree removed (kept if it failed). A thread that
ends done with a change then offers its merge into the workspace: a write that
waits for a person, shown with the branch's diff, answered like any other
(harness approve/deny, the page, the API, MCP; an --approve or --allow that
covers merge_worktree answers it). Approved, it is applied (a conflict fails the
action, naming the files, and nothing is applied); denied, the change stays on
the branch. --worktree-merge branch (or the settings' "worktree_merge") offers
nothing and leaves it on the branch; a project file may choose branch, never
ask. --worktrees off, or a directory that is not a repository: threads share
the workspace, and the observation of each action names the changes other
threads' actions made (by thread and action, in this worker or another process
in the directory) apart from those no recorded action names.

The worker keeps this machine's search index (harness search) from the stream:
every append, by any worker or person, is indexed a moment after it is made
(--search-index=false leaves that to each search).`,
		Example: `  harness worker --store nats://localhost:4222 --model openai:gpt-4o-mini --approve writes
  harness worker --store nats://a:4222,nats://b:4222,nats://c:4222 --concurrency 4 --allow 'run_command:go test *'`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if concurrency < 1 {
				return usageError("--concurrency %d: want 1 or more threads at once", concurrency)
			}
			if drain < 0 {
				return usageError("--drain %v: want a duration ≥ 0, such as 30s", drain)
			}
			return a.worker(cmd.Context(), &f, concurrency, drain, index)
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "the model of threads that recorded none yet: scripted:FILE, openai:MODEL or anthropic:MODEL (default: the settings file's)")
	fl.StringVar(&f.approve, "approve", "", "which confirmations are approved without asking: ask, writes or all (default ask, or the settings file's); replaces the mode of a thread's own policy; the rest wait for a person")
	fl.StringArrayVar(&f.allow, "allow", nil, "approve calls matching `PATTERN`: TOOL or TOOL:GLOB, e.g. 'run_command:go test *' (repeatable; added to a thread's own policy; see harness run --help)")
	fl.StringArrayVar(&f.deny, "deny", nil, "deny calls matching `PATTERN`; deny wins (repeatable; added to a thread's own policy; on run_command only a hint)")
	fl.StringVar(&f.sandbox, "sandbox", "", "where commands may reach: workspace-write (default, or the settings file's), read-only, or off")
	addNetworkFlags(fl, &f)
	fl.StringVar(&f.worktrees, "worktrees", "", worktreesUsage)
	fl.StringVar(&f.worktreeMerge, "worktree-merge", "", "what a thread that ends done with a change in its own worktree does with its branch: ask (offer a person the merge into the workspace; the default, or the settings' \"worktree_merge\") or branch (leave it there, named)")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "park a thread on a budget wait before its model turn `N`+1 (raise it: harness budget THREAD raise --turns N); 0 is no bound (default: the settings file's max_turns, else 50)")
	fl.BoolVar(&index, "search-index", true, "keep this machine's search index from the stream")
	fl.IntVar(&concurrency, "concurrency", worker.DefaultConcurrency, "how many threads to drive at once")
	fl.DurationVar(&drain, "drain", worker.DefaultDrain, "on SIGTERM or Ctrl-C, how long to wait for the threads driven to reach a point where they can stop before interrupting them")
	f.fs = fl
	return cmd
}

// worker runs a worker on the workspace's NATS store until the command's
// context ends (a signal), then drains.
func (a *app) worker(ctx context.Context, f *driveFlags, concurrency int, drain time.Duration, indexing bool) error {
	p, err := a.place()
	if err != nil {
		return err
	}
	flags, err := f.layer()
	if err != nil {
		return err
	}
	s, err := a.newSession(p, f, stock.SessionOptions{Drive: true, Worker: true, Model: stock.ModelIfAny, ModelSpec: f.model, ModelDir: cwdOrEmpty()})
	if err != nil {
		if errors.Is(err, stock.ErrModelSpec) {
			return asUsage(fmt.Errorf("--model: %w", err))
		}
		return err
	}
	defer s.Close()
	spec := s.Model
	if err := checkModel(spec); err != nil {
		return err
	}
	if err := a.autoServe(ctx, p, s.Settings(), false); err != nil {
		return err
	}
	if err := stock.NeedServer(ctx, p); errors.Is(err, stock.ErrNoServer) {
		return fmt.Errorf("%w; start `harness serve` in %s (it drives submitted threads itself too; --drive 0 leaves them to the workers), or use a NATS store (--store nats://HOST:PORT)", err, p.Root)
	} else if err != nil {
		return err
	}
	if err := a.openStore(ctx, s); err != nil {
		return err
	}
	// A thread's own policy, with this worker's flags on it, as a resume
	// with them records it (see setPolicy): the flags were checked above.
	w, ns, err := worker.OnSession(ctx, s, flags, worker.Options{
		LoadModel:   workerModels(spec),
		Concurrency: concurrency,
		Drain:       drain,
		Log:         a.workerEvent,
	})
	if err != nil {
		return err
	}
	if err := s.Stock.Sandbox.Check(); err != nil {
		fmt.Fprintf(a.stderr, "harness: %s\n", terminalHints.NoSandbox(err))
	}
	model := spec
	if model == "" {
		model = "none (threads that recorded none wait)"
	}
	fmt.Fprintf(a.stderr, "harness worker: driving the threads of %s in %s, %d at a time (model %s); SIGTERM or Ctrl-C drains\n",
		s.Place.Where(), s.Place.Root, concurrency, model)

	// The index follows the stream until the worker has drained; a
	// second signal, while draining, interrupts at once.
	var index func(context.Context)
	if indexing && ns != nil {
		index = func(ctx context.Context) {
			s.Place.FollowSearch(ctx, ns, func(format string, args ...any) {
				fmt.Fprintf(a.stderr, "harness worker: %s\n", present.EscapeLine(fmt.Sprintf(format, args...)))
			})
		}
	}
	if err := w.RunDraining(ctx, index, os.Interrupt, syscall.SIGTERM); err != nil {
		return err
	}
	fmt.Fprintln(a.stderr, "harness worker: drained")
	return nil
}

// workerModels loads the model of a thread's turn (see stock.Models),
// saying how to give one where none is.
func workerModels(spec string) func(string) (model.Model, error) {
	load := stock.Models(spec)
	return func(recorded string) (model.Model, error) {
		m, err := load(recorded)
		if errors.Is(err, stock.ErrNoModel) {
			return nil, fmt.Errorf("%w; start the worker with --model (or set the settings file's model)", err)
		}
		return m, err
	}
}

// workerEvent prints what the worker did: a line of text, or of JSON.
func (a *app) workerEvent(e worker.Event) {
	now := time.Now()
	if a.jsonOut() {
		b, _ := json.Marshal(e.Record(now.UTC()))
		fmt.Fprintln(a.stdout, string(b))
		return
	}
	tell.WorkerEvent(a.stdout, e, now, a.paint, workerHint)
}

func (a *app) submitCmd() *cobra.Command {
	var id string
	var f driveFlags
	cmd := &cobra.Command{
		Use:   "submit [--thread ID] [--approve MODE] [--allow PATTERN] [--deny PATTERN] PROMPT|-",
		Short: "Start a thread for the workers: record the prompt and run nothing",
		Long: `Start a thread with PROMPT as the user's message (- reads it from stdin) and
run nothing: a worker (harness worker, on the same NATS store) takes it up,
with its own --model and sandbox. 'harness run --detach' does the same.

The approval policy (--approve, --allow, --deny and the settings') is recorded
as the thread's own, as harness run records it: the workers decide the thread's
confirmations by it, with what each worker's own flags add (see harness worker).
Without any, the thread records none and each worker's own policy decides.

On a store in a directory the harness server that holds it drives the thread
(harness serve, see its --drive), or a worker that takes work from it (harness
worker); with no server, or one that drives nothing and has no worker, nobody
does until harness resume runs it. submit says which.`,
		Example: `  harness submit --store nats://localhost:4222 "Set the cache TTL to 300"
  harness submit --approve writes --allow 'run_command:go test *' "Fix the tests"`,
		Args: args(1, -1, "a PROMPT"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			prompt, err := a.readPrompt(args)
			if err != nil {
				return err
			}
			return a.submit(cmd.Context(), id, prompt, &f)
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&id, "thread", "", "the new thread's id (default: t1, t2, … the next free one)")
	fl.StringVar(&f.approve, "approve", "", "which confirmations are approved without asking: ask, writes or all (default ask, or the settings'); recorded as the thread's policy")
	fl.StringArrayVar(&f.allow, "allow", nil, "approve calls matching `PATTERN`: TOOL or TOOL:GLOB (repeatable; see harness run --help)")
	fl.StringArrayVar(&f.deny, "deny", nil, "deny calls matching `PATTERN`; deny wins (repeatable; on run_command only a hint)")
	f.fs = fl
	completeFlag(cmd, "approve", "ask", "writes", "all")
	return cmd
}

// submit starts a thread and runs nothing. The policy the flags f and the
// settings give is recorded as the thread's own, as run records it.
func (a *app) submit(ctx context.Context, id, prompt string, f *driveFlags) error {
	if strings.TrimSpace(prompt) == "" {
		return usageError("submit: the prompt is empty")
	}
	if id != "" {
		if err := checkID(id); err != nil {
			return err
		}
	}
	// The settings and the policy are checked before anything is
	// recorded: a settings file that cannot be read is an error, as for
	// run, never a policy recorded without its deny patterns.
	s, err := a.openSession(ctx, f, stock.SessionOptions{Create: true})
	if err != nil {
		return err
	}
	defer s.Close()
	got, seq, err := s.SubmitThread(ctx, id, prompt, a.whoami(), f.policyGiven())
	if errors.Is(err, stock.ErrBadSettings) {
		return asUsage(err)
	}
	if errors.Is(err, harness.ErrThreadExists) {
		return usageError("thread %s already exists; add a message with `harness post %s user.message --data '{\"text\": \"...\"}'`", id, id)
	}
	if err != nil {
		return err
	}
	id = got
	d := s.DriverOf()
	if a.jsonOut() {
		return a.printJSON(map[string]any{"thread": id, "status": "submitted", "seq": seq, "store": s.Place.Where(), "driven_by": d.By})
	}
	fmt.Fprintf(a.stdout, "%s thread %s (seq %d) in %s\n", a.paint("bold", "submitted:"), id, seq, s.Place.Where())
	fmt.Fprintf(a.stdout, "    %s\n", submittedHint(id, d))
	return nil
}

// detachRefuses refuses run --detach with the flags that say how to drive
// the thread: the workers drive it, under their own. The approval policy
// is the thread's, recorded (see submit).
func detachRefuses(f *driveFlags) error {
	for _, name := range []string{"model", "no-input", "max-turns", "max-steps", "sandbox", "network", "network-allow", "worktrees"} {
		if f.fs != nil && f.fs.Changed(name) {
			return usageError("run --detach --%s: a detached thread is driven by the workers, under their settings (harness worker --%s); drop --%s", name, name, name)
		}
	}
	if f.outputSchema != "" {
		// The worker that takes the thread configures it: the schema would
		// not reach it, and the answer would go unchecked.
		return usageError("run --detach --output-schema: a detached thread is configured by the worker that takes it, which does not carry an output schema; drop --detach to check the answer")
	}
	return nil
}

func (a *app) migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate --store nats://HOST:PORT",
		Short: "Copy the threads of a NATS store kept in an older layout into the current one",
		Long: `Copy the threads of a NATS store written by an older version (a subject per
fact) into the current layout (a subject per thread), in the same stream, fact
for fact: seqs, times and hashes are kept. Other commands refuse such a store
until it is migrated. Stopped halfway, migrate goes on where it stopped when
run again; a store in the current layout is left alone. While it runs, old
versions can no longer append to the store.`,
		Example: `  harness migrate --store nats://localhost:4222`,
		Args:    args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			p, err := a.place()
			if err != nil {
				return err
			}
			if p.Remote == "" {
				return usageError("migrate: the store is the directory %s, which needs no migration; migrate copies a NATS store: pass --store nats://HOST:PORT", p.Store)
			}
			m, err := natsstore.Migrate(cmd.Context(), p.Remote)
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(map[string]any{"store": p.Where(), "already": m.Already, "threads": m.Threads, "facts": m.Facts})
			}
			if m.Already {
				fmt.Fprintf(a.stdout, "%s is in the current layout: nothing to migrate\n", p.Where())
				return nil
			}
			fmt.Fprintf(a.stdout, "migrated %s: %s, %s copied\n", p.Where(), present.Plural(m.Threads, "thread", "threads"), present.Plural(m.Facts, "fact", "facts"))
			return nil
		}),
	}
}

// workerHint is answerHint for a thread the workers drive: the answer
// alone wakes it on a worker, so the hint names no resume (a resume here
// would drive the thread in this command instead).
func workerHint(id string, p drive.Pending) string { return hintFor(id, p, false) }
