package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// driveFlags are the flags of the commands that run a thread on.
type driveFlags struct {
	// plan starts a thread in plan mode (run --plan).
	plan     bool
	model    string
	approve  string
	allow    []string
	deny     []string
	noInput  bool
	maxTurns int
	maxSteps int
	window   int
	// maxOutput bounds the tokens the model writes in one turn; 0 is the
	// provider's default.
	maxOutput int64
	sandbox   string
	// network is --network's rules, and --network-allow's hosts
	// (network.go).
	network stock.NetworkFlags
	// worktrees is when children work in worktrees of their own;
	// worktreeMerge what a worker's thread's end does with its branch.
	worktrees, worktreeMerge string
	// outputSchema is the file of the JSON Schema the final answer must
	// be valid against (--output-schema); schema its content, once read.
	outputSchema string
	schema       []byte
	// budget is --max-cost and --max-tokens (budget.go).
	budget budgetFlags
	fs     *pflag.FlagSet
	// loaded is the model the --model flag names, once loadModel has
	// loaded it; model is then its spec as recorded.
	loaded model.Model
	// mcpPrompt is run's --mcp-prompt (mcp_prompts.go).
	mcpPrompt mcpPromptFlags
}

// boundsHelp says how far one command drives a thread.
const boundsHelp = `A command drives a thread at most --max-steps steps in one go (default 100, or
the settings' "max_steps"): a thread that is still going then (a model looping
on a tool that needs no confirmation, say) ends the command with status
step_limit and exit 1; resume to go on. A thread takes at most --max-turns
model turns in all, its children's included once they report (default 50, or
the settings' "max_turns"; 0 is no bound): then it waits for a person on the
budget wait (status parked, exit 3) and goes on once raised by a number of
turns (harness budget THREAD raise --turns N). A child's own bound (the
delegation's max_turns) ends the child, which reports to its parent. A thread
recorded before turns waited stopped for good with budget.exhausted; to go on,
fork it before that fact and resume the fork with a larger --max-turns (the
command that stopped says how).`

// worktreesUsage is the help of --worktrees.
const worktreesUsage = "when children work in git worktrees of their own (outside the workspace; their changes come back through merge_worktree, which a person approves seeing the diff): parallel (children delegated in one turn; the default, or the settings' \"worktrees\"), always, or off (they share the workspace)"

func (f *driveFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "the model: scripted:FILE (a JSON Lines script of decisions), openai:MODEL or anthropic:MODEL (default: the one the thread recorded, or the settings')")
	fl.StringVar(&f.approve, "approve", "", "which confirmations are approved without asking: ask, writes or all (default ask, or the settings'); recorded as the thread's policy")
	fl.StringArrayVar(&f.allow, "allow", nil, "approve calls matching `PATTERN` without asking: TOOL or TOOL:GLOB, e.g. 'run_command:go test *' (repeatable); a path matches as the cleaned workspace-relative path, and in a command * never matches ; & | $ ` < > ( ) or a line break")
	fl.StringArrayVar(&f.deny, "deny", nil, "deny calls matching `PATTERN` without asking (the model is told); deny wins over allow and --approve (repeatable); on run_command only a hint, as a shell can spell a command many ways")
	fl.BoolVar(&f.noInput, "no-input", false, "never ask at the prompt: park the thread (exit 3) when a person must answer")
	fl.StringVar(&f.sandbox, "sandbox", "", "where commands may reach: workspace-write (write the workspace only; the default, or the settings' \"sandbox\"), read-only, or off (no sandbox: your full authority; recorded, and shown at every approval)")
	addNetworkFlags(fl, f)
	fl.StringVar(&f.worktrees, "worktrees", "", worktreesUsage)
	fl.IntVar(&f.maxTurns, "max-turns", 0, "park the thread on a budget wait before its model turn `N`+1, counting all its turns (raise it: harness budget THREAD raise --turns N); 0 is no bound (default: the settings' max_turns, else 50)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, "run at most `N` steps in this command before stopping with the thread resumable (default: the settings' max_steps, else 100)")
	fl.IntVar(&f.window, "context-window", 0, "the model's context window in `TOKENS`: past 80% of it, as the provider counts usage, older turns are summarized by the model (a compaction turn, recorded as context.compacted); 0 is not known (default: the settings' context_window)")
	fl.Int64Var(&f.maxOutput, "max-output-tokens", 0, "bound the tokens the model writes in one turn to `N`; an answer cut off there is recorded as cut and the model asked to go on (three cuts in a row fail the thread; resume once it is raised); 0 is the provider's default (anthropic 4096; an OpenAI-compatible server its own, llama-server's -n) (default: the settings' max_output_tokens)")
	fl.StringVar(&f.outputSchema, "output-schema", "", "the JSON Schema `FILE` the final answer must be valid against: the model is told it, each answer is checked (output.checked), an invalid one goes back to the model with the errors, and the third in a row fails the thread (invalid_output); the valid one is the result's \"output\". Recorded when the thread starts; a resume checks against that one")
	f.budget.add(fl)
	f.fs = fl
	completeDriveFlags(cmd)
}

// modelOptions are the options the flags give a real provider.
func (f *driveFlags) modelOptions() []model.Option {
	if f == nil || f.maxOutput <= 0 {
		return nil
	}
	return []model.Option{model.WithMaxTokens(f.maxOutput)}
}

// changed reports whether the flag name was given.
func (f *driveFlags) changed(name string) bool { return f.fs != nil && f.fs.Changed(name) }

// layer is the flags given as a layer of settings (stock.FlagLayer); a
// flag value that cannot work is a usage error.
func (f *driveFlags) layer() (stock.SettingsSource, error) {
	var given []string
	if f.fs != nil {
		f.fs.Visit(func(fl *pflag.Flag) { given = append(given, fl.Name) })
	}
	given, allow, err := f.networkGiven(given)
	if err != nil {
		return stock.SettingsSource{}, err
	}
	src, err := stock.FlagLayer(stock.Settings{Model: f.model, Approve: f.approve, Allow: f.allow, Deny: f.deny,
		MaxTurns: &f.maxTurns, MaxSteps: &f.maxSteps, ContextWindow: &f.window, MaxOutputTokens: &f.maxOutput,
		Sandbox: f.sandbox, Network: f.network.On, NetworkAllow: allow, Worktrees: f.worktrees, WorktreeMerge: f.worktreeMerge,
		MaxCost: &f.budget.cost, MaxTokens: &f.budget.tokens}, given...)
	return src, asUsage(err)
}

// outputOption reads and compiles the --output-schema file, if any: the
// runtime option that records it on new threads (nil for none). A file
// that cannot be read or is not a JSON Schema is a usage error.
func (f *driveFlags) outputOption() (harness.Option, error) {
	if f == nil || f.outputSchema == "" {
		return nil, nil
	}
	if f.schema == nil {
		b, err := drive.ReadOutputSchema(f.outputSchema)
		if err != nil {
			return nil, usageError("--output-schema: %v", err)
		}
		f.schema = b
	}
	opt, err := drive.OutputSchema(f.schema, f.outputSchema)
	if err != nil {
		return nil, usageError("--output-schema %s: %v", f.outputSchema, err)
	}
	return opt, nil
}

// sameSchema checks that a thread driven on with --output-schema was
// started with that schema: a usage error otherwise.
func (f *driveFlags) sameSchema(ctx context.Context, th *harness.Thread) error {
	if f == nil || f.outputSchema == "" {
		return nil
	}
	v, err := th.View(ctx)
	if err != nil {
		return err
	}
	if err := drive.SameOutputSchema(v, f.schema); err != nil {
		return usageError("--output-schema %s: %v", f.outputSchema, err)
	}
	return nil
}

// loadModel loads the model the --model flag names, if any, so that a bad
// one is a usage error before anything is posted or run.
func (f *driveFlags) loadModel() error {
	if f.model == "" || f.loaded != nil {
		return nil
	}
	spec, err := stock.ParseModelSpec(f.model, cwdOrEmpty())
	if err != nil {
		return asUsage(err)
	}
	if f.maxOutput < 0 {
		return usageError("--max-output-tokens %d: want a number of tokens, or 0 for the provider's default", f.maxOutput)
	}
	m, err := stock.LoadModel(spec, f.modelOptions()...)
	if err != nil {
		return asUsage(fmt.Errorf("--model: %w", err))
	}
	f.model, f.loaded = spec, m
	return nil
}

// policyGiven reports whether the flags name an approval policy.
func (f *driveFlags) policyGiven() bool {
	return f.approve != "" || len(f.allow) > 0 || len(f.deny) > 0
}

// driving is how a command that may drive a thread opens its session:
// the flags and settings checked strictly, their bounds and sandbox
// applied, their MCP servers started within ctx.
func driving(ctx context.Context) stock.SessionOptions {
	return stock.SessionOptions{Drive: true, MCP: ctx}
}

// openDrive opens the workspace's existing store for a command that may
// drive a thread with the flags f: the flags are checked first, and the
// harness is configured with their bounds.
func (a *app) openDrive(ctx context.Context, f *driveFlags) (*stock.Session, drive.Approval, error) {
	if err := f.loadModel(); err != nil {
		return nil, drive.Approval{}, err
	}
	o := driving(ctx)
	o.NoInput = !a.interactive(f.noInput)
	s, err := a.openSession(ctx, f, o)
	if err != nil {
		return nil, drive.Approval{}, err
	}
	if f.loaded != nil && !f.changed("max-output-tokens") && s.ModelOptions() != nil {
		// The settings bound the model's output: load it again with them.
		if f.loaded, err = stock.LoadModel(f.model, s.ModelOptions()...); err != nil {
			s.Close()
			return nil, drive.Approval{}, asUsage(fmt.Errorf("--model: %w", err))
		}
	}
	a.front().WarnMCP(s)
	// Path rules resolve through the workspace the command acts in, once
	// it entered the thread's (newDriver).
	approval := s.Approval
	approval.Resolve = nil
	return s, approval, nil
}

// readPrompt is the prompt of run or continue (drive.ReadPrompt): the
// arguments joined, or stdin when the one argument is "-".
func (a *app) readPrompt(args []string) (string, error) {
	p, err := drive.ReadPrompt(args, a.stdin)
	if errors.Is(err, drive.ErrBadPrompt) {
		return "", usageError("%s", strings.TrimPrefix(err.Error(), drive.ErrBadPrompt.Error()+": "))
	}
	return p, err
}

func (a *app) runCmd() *cobra.Command {
	var f driveFlags
	var sf serveFlags
	var serving bool
	var id string
	var detach bool
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT|-",
		Short: "Start a thread in this workspace and run it until it is done or waits for a person",
		Long: `Start a thread with PROMPT as the user's message (- reads it from stdin) and run
it, printing each fact as it is appended. On a terminal, a confirmation or
question is asked at the prompt and the answer is posted as 'harness post'
would; with --no-input, or without a terminal, the thread parks (exit 3) and
says what it waits for.

The approval policy (--approve, --allow, --deny and the settings') is recorded
as the thread's own (policy.set): later commands on the thread apply it, and a
flag they give is recorded as a change of it.

Patterns match a path as the cleaned path inside the workspace ("./a/../b" is
"b"); a path that leaves the workspace is always put to a person. In an --allow
pattern for a command, * and ? never match the shell's control characters
; & | $ ` + "`" + ` < > ( ) or a line break, so 'run_command:go test *' does not
approve "go test ./... ; rm -rf ~". A --deny pattern on run_command is only a
hint: a shell can always spell a command another way; to keep commands from
running, leave them to a person.

` + boundsHelp + `

The workspace is the nearest directory, from here upwards, that holds a store
(.harness/db) or is a git repository's top directory (holds .git): the search
never passes a repository's top, so a .harness above it is not this workspace's.
With neither, it is the current directory. The store is created there. The
thread records it (host:directory), and every later command acts there.`,
		Example: `  harness run --model scripted:script.jsonl "Set the cache TTL to 300"
  harness run --model openai:gpt-4o-mini --approve writes --deny 'write_file:.github/*' "Fix the tests"
  git diff | harness run --model anthropic:claude-sonnet-4-5 -
  harness run --detach --store nats://localhost:4222 "Fix the tests"   # for the workers`,
		Args: func(cmd *cobra.Command, args []string) error { return f.mcpPrompt.positional(cmd, args) },
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if f.mcpPrompt.spec != "" && (detach || serving) {
				return usageError("--mcp-prompt starts a thread here: not with --detach or --serve")
			}
			if detach {
				// For the workers: record the prompt, run nothing.
				if err := detachRefuses(&f); err != nil {
					return err
				}
				if serving {
					return usageError("run --detach --serve: a detached thread runs on the workers, not here; drop one of them")
				}
				if f.plan {
					return usageError("run --detach --plan: start it with harness run --plan, or switch a submitted thread with harness plan THREAD on")
				}
				prompt, err := a.readPrompt(args)
				if err != nil {
					return err
				}
				return a.submit(ctx, id, prompt, &f)
			}
			if id != "" {
				if err := checkID(id); err != nil {
					return err
				}
			}
			prompt, err := "", error(nil)
			if f.mcpPrompt.spec == "" {
				prompt, err = a.readPrompt(args)
			}
			if err != nil {
				return err
			}
			o := driving(ctx)
			o.Create, o.Model, o.ModelSpec, o.ModelDir = true, stock.ModelNeeded, f.model, cwdOrEmpty()
			o.NoInput = !serving && !a.interactive(f.noInput)
			if serving {
				// The page answers: the command asks nobody at the prompt.
				f.noInput = true
				var th *harness.Thread
				return runModelErr(a.serve(ctx, &f, sf, serveHooks{
					opened: func(s *stock.Session) error { return a.runModel(s, &f) },
					run: func(s *stock.Session, approval drive.Approval) error {
						var err error
						th, err = a.runThread(ctx, s, id, prompt, approval, &f, f.loaded)
						return err
					},
					last: func(s *stock.Session) error { return a.lastState(s, th) },
				}, o))
			}
			p, err := a.place()
			if err != nil {
				return err
			}
			s, err := a.newSession(p, &f, o)
			if err != nil {
				return runModelErr(err)
			}
			defer s.Close()
			if err := a.runModel(s, &f); err != nil {
				return err
			}
			if err := a.mcpPromptMessage(ctx, s, &f.mcpPrompt); err != nil {
				return err
			}
			if err := a.autoServe(ctx, p, s.Settings(), true); err != nil {
				return err
			}
			if err := a.openStore(ctx, s); err != nil {
				return err
			}
			a.front().WarnMCP(s)
			_, err = a.runThread(ctx, s, id, prompt, s.Approval, &f, f.loaded)
			return err
		}),
	}
	f.add(cmd)
	cmd.Flags().StringVar(&id, "thread", "", "the new thread's id (default: t1, t2, … the next free one)")
	cmd.Flags().BoolVar(&f.plan, "plan", false, "start the thread in plan mode: no tool that writes is offered, commands run with the workspace read-only, and the model's plan waits for you to act on it (harness plan THREAD act)")
	cmd.Flags().BoolVar(&detach, "detach", false, "start the thread for the workers (harness worker) and run nothing, as harness submit does (its --approve, --allow and --deny are recorded as the thread's policy)")
	cmd.Flags().BoolVar(&serving, "serve", false, "serve the workspace's store while the thread runs, and after, until interrupted, as harness serve does: the page answers what the thread waits for")
	sf.add(cmd)
	f.mcpPrompt.add(cmd)
	return cmd
}

// runModelErr says how to name a model when neither the command nor the
// settings do.
func runModelErr(err error) error {
	var ignored *stock.NoModelError
	if errors.As(err, &ignored) {
		return usageError("no model given; pass --model scripted:FILE, openai:MODEL or anthropic:MODEL (%s names a model, left out until you trust its content: harness trust)", present.EscapeLine(ignored.Ignored))
	}
	if errors.Is(err, stock.ErrNoModel) {
		return usageError("no model given; pass --model scripted:FILE, openai:MODEL or anthropic:MODEL")
	}
	return err
}

// runModel loads the model a session records for the thread it starts
// (the --model flag's, else the settings'), so that a bad one is a usage
// error before anything is run.
func (a *app) runModel(s *stock.Session, f *driveFlags) error {
	m, err := stock.LoadModel(s.Model, s.ModelOptions()...)
	if err != nil {
		return asUsage(fmt.Errorf("--model: %w", err))
	}
	f.loaded = m
	return nil
}

// runThread starts a thread with prompt on the session's store and
// drives it (see run), and returns it. The policy the thread starts with
// is recorded in it.
func (a *app) runThread(ctx context.Context, s *stock.Session, id, prompt string, approval drive.Approval, f *driveFlags, m model.Model) (*harness.Thread, error) {
	exists := func() error {
		return usageError("thread %s already exists; continue it with `harness continue %s \"...\"` or `harness resume %s`", id, id, id)
	}
	f.loaded = m
	workspace := present.EscapeLine(s.Stock.Config.Workspace)
	if id != "" {
		if _, err := s.Store.Head(ctx, id); err == nil {
			return nil, exists()
		}
	}
	d, err := a.newDriver(s, id, approval, f)
	if err != nil {
		return nil, err
	}
	st, err := d.Run(ctx, stock.NewThread{ID: id, Message: f.mcpPrompt.message(prompt), By: a.whoami(), PolicyGiven: f.policyGiven(), Plan: f.plan,
		Picked: func(next, taken string) {
			if taken != "" {
				a.printf("thread %s was started elsewhere meanwhile; taking %s\n", taken, next)
			}
			a.printf("%s thread %s in %s\n", a.paint("bold", "harness:"), next, workspace)
		}})
	switch {
	case errors.Is(err, harness.ErrThreadExists):
		return nil, exists() // another process (on a shared store) started it first
	case errors.Is(err, stock.ErrBadSettings):
		return d.Thread, asUsage(err)
	case err != nil:
		return d.Thread, err
	}
	return d.Thread, a.report(st, d.Appended, s)
}

func (a *app) resumeCmd() *cobra.Command {
	var f driveFlags
	var last bool
	cmd := &cobra.Command{
		Use:   "resume THREAD | resume --last",
		Short: "Continue a thread; on a parked one, ask (on a terminal) or say what it waits for (exit 3)",
		Long: `Continue a thread from its log: run what its view enables until it is done or
waits for a person. A parked thread is not changed: resume says what it waits
for and exits 3 (a terminal asks at the prompt, as run does). An action found in
doubt (its process died while it ran) is never run again: resume records what
it observes and parks on reconcile. --last takes the thread of the store that
was active last.

The thread runs in the workspace it records, whatever directory resume is run
from, under its own approval policy; --approve, --allow and --deny change that
policy, and the change is recorded.

A thread whose model turn failed (a bad key, a quota, a service down) is tried
once more: fix the cause, then resume (with --model to use another model). If
the turn fails again, resume ends with exit 1 and the reason.

` + boundsHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if last {
				return argsN(cmd, args, 0, 0, "no THREAD with --last")
			}
			return argsN(cmd, args, 1, 1, "THREAD (or --last)")
		},
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				// An empty THREAD (a script's unset $T) is not --last.
				if id = args[0]; id == "" {
					return usageError("resume: THREAD is empty: name a thread, or pass --last for the one active last")
				}
			}
			return a.resume(cmd.Context(), id, &f)
		}),
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&last, "last", false, "resume the thread that was active last")
	return cmd
}

func (a *app) continueCmd() *cobra.Command {
	var f driveFlags
	var key string
	cmd := &cobra.Command{
		Use:   "continue THREAD MESSAGE|-",
		Short: "Write to a thread (a user.message; - reads it from stdin) and run it on",
		Long: `Add a message to a thread — what to do next, or what to do instead after a
denial or a stop — and resume it: the model's next turn sees it. The thread
runs in the workspace it records, under its own policy (see resume).

The message is posted once: --key names it (default: one derived from the
message and where the thread stands), so running the same command again
appends nothing.`,
		Example: `  harness continue t1 "Also update the docs"
  harness continue t1 - < notes.md`,
		Args:              args(2, -1, "THREAD and a MESSAGE"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			if err := checkID(id); err != nil {
				return err
			}
			msg, err := a.readPrompt(args[1:])
			if err != nil {
				return err
			}
			if _, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: msg}); err != nil {
				return asUsage(err)
			}
			if key != "" {
				if err := facts.ValidateCause(facts.IngressCause(key)); err != nil {
					return usageError("--key %q: %v", key, err)
				}
			}
			s, dr, err := a.driveThread(ctx, id, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			dr.Retry = true
			if _, err := drive.PostMessage(ctx, dr.Thread, msg, key); err != nil {
				return err
			}
			return dr.finish(ctx)
		}),
	}
	f.add(cmd)
	cmd.Flags().StringVar(&key, "key", "", "the idempotency key: a message with a key already used appends nothing")
	return cmd
}

// driveThread opens the workspace to drive the existing thread id with
// the flags f (see take). The caller closes the session.
func (a *app) driveThread(ctx context.Context, id string, f *driveFlags) (*stock.Session, *driver, error) {
	s, approval, err := a.openDrive(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	var dr *driver
	if err = a.threadExists(ctx, s, id); err == nil {
		dr, err = a.take(ctx, s, approval, id, f)
	}
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, dr, nil
}

// take makes a driver of the thread id, which exists: it enters the
// workspace the thread records, checks the --output-schema given is the
// thread's, and records the policy (and budget) the flags change: what a
// command that writes to a thread does before it posts.
func (a *app) take(ctx context.Context, s *stock.Session, approval drive.Approval, id string, f *driveFlags) (*driver, error) {
	if err := a.enter(ctx, s, id); err != nil {
		return nil, err
	}
	dr, err := a.newDriver(s, id, approval, f)
	if err != nil {
		return nil, err
	}
	if err := f.sameSchema(ctx, dr.Thread); err != nil {
		return nil, err
	}
	return dr, dr.setPolicy(ctx, f)
}

// resume drives a thread with the flags f (id "" is the thread active
// last). A failed model turn is run once more: a resume is a person's word
// that its cause is fixed.
func (a *app) resume(ctx context.Context, id string, f *driveFlags) error {
	if id != "" {
		if err := checkID(id); err != nil {
			return err
		}
	}
	s, approval, err := a.openDrive(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	if id == "" {
		if id, err = lastThread(ctx, s); err != nil {
			return err
		}
		a.printf("%s thread %s (active last)\n", a.paint("bold", "harness:"), id)
	}
	if err := a.threadExists(ctx, s, id); err != nil {
		return err
	}
	if again, err := a.resumeRerun(ctx, s, id, f); again || err != nil {
		return err
	}
	d, err := a.take(ctx, s, approval, id, f)
	if err != nil {
		return err
	}
	if f.changed("context-window") {
		// The bounds a thread recorded when it started win over the
		// settings of each command; a flag given now is a person's word
		// that they change, and it is recorded as such.
		if err := d.RecordContextBounds(ctx, d.Thread, a.whoami()); err != nil {
			return err
		}
	}
	d.Retry = true
	if d.Thread, err = d.OpenTree(ctx, id); err != nil {
		return err
	}
	return d.finish(ctx)
}

// driver runs one thread on for this command (tell.Terminal): it asks a
// person at the prompt (closing the store meanwhile), and prints each
// appended fact.
type driver struct {
	*tell.Terminal
	a *app
	s *stock.Session
}

// terminalHints are what a driver says that names this command line's
// commands and flags.
var terminalHints = tell.TerminalHints{
	NoModel: func(id string) error {
		return usageError("thread %s needs a model turn and records no model; pass --model scripted:FILE", id)
	},
	Model: func(id string, err error) error {
		return fmt.Errorf("thread %s: %w; pass --model to use another", id, err)
	},
	Interrupted: func(id string) error {
		return fmt.Errorf("interrupted; thread %s is resumable: harness resume %s", id, tell.ShellWord(id))
	},
	NoSandbox: func(err error) string {
		return present.EscapeLine(err.Error()) + ": commands are refused; to run them without a sandbox, with your full authority, pass --sandbox off (it is recorded)"
	},
	Held: func(id string) string {
		w := tell.ShellWord(id)
		return fmt.Sprintf("thread %s is driven by another process (a run or resume in another terminal, a server, a worker): it takes up what was posted itself; this command waits until that process lets go of it, showing what it appends. Ctrl-C stops waiting (the thread goes on there); harness log -f %s follows it, harness stop %s stops it", id, w, w)
	},
}

func (a *app) newDriver(s *stock.Session, id string, approval drive.Approval, f *driveFlags) (*driver, error) {
	asker := &tell.Asker{In: a.stdin, Getenv: a.getenv, By: a.whoami(),
		Interrupted: func(id string) error {
			return fmt.Errorf("interrupted at the prompt; thread %s still waits: `harness resume %s` asks again", id, id)
		},
		LeftElsewhere: func(e drive.Event) string {
			return fmt.Sprintf("left for an answer elsewhere: harness answer %s --request %s --elicit accept|decline|cancel, or the page",
				present.EscapeLine(tell.ShellWord(e.Thread)), present.EscapeLine(tell.ShellWord(e.Request)))
		}}
	t, err := tell.NewTerminal(tell.Terminal{Report: a.reportOf(s), Err: a.stderr, Say: a.printf, Hints: terminalHints}, approval, id,
		tell.TerminalOptions{Model: f.loaded, Spec: f.model, Interactive: a.interactive(f.noInput), Asker: asker,
			Live: a.textOut() && tell.IsTerminal(a.stdout), AskedHint: askedHint, OwnFiles: []io.Writer{a.stdout, a.stderr}})
	if err != nil {
		return nil, err
	}
	return &driver{Terminal: t, a: a, s: s}, nil
}

// finish drives the thread and reports how it stands: the exit code says
// done (0), parked (3), or failed (1).
func (d *driver) finish(ctx context.Context) error {
	st, err := d.Drive(ctx)
	if err != nil {
		return err
	}
	return d.a.report(st, d.Appended, d.s)
}

// reportOf tells how a thread of the session s stands, as this command
// prints (tell.Report).
func (a *app) reportOf(s *stock.Session) tell.Report {
	out := a.output
	if a.streamOut() {
		out = tell.OutputStream
	}
	return tell.Report{Teller: a.teller(), Output: out, Lines: a.lines, JSON: a.printJSON, Session: s, GoOn: goOnHint}
}

// report prints how a thread stands and sets the exit code. A failure is
// said once: on stdout, with the state (the exit code says it failed).
func (a *app) report(st drive.State, appended []facts.Fact, s *stock.Session) error {
	code, err := a.reportOf(s).Tell(st, appended)
	switch {
	case err != nil:
		return err
	case code == exitOK:
		return nil
	case code == exitParked:
		a.code = exitParked
		return nil
	}
	return &exitErr{code: code} // said above
}
