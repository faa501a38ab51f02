package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/tracing"
)

// The exit codes.
const (
	exitOK     = 0
	exitError  = 1
	exitUsage  = 2
	exitParked = 3
	// exitInterrupted is an interrupt's (SIGINT, Ctrl-C: 128+2); SIGTERM's
	// is 143 (128+15), as a shell reports them.
	exitInterrupted = 130
)

// exitErr ends the command with a code; err, when set, is printed.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitErr) Unwrap() error { return e.err }

// usageError is a mistake in the command line: a bad flag value, argument
// or payload. Nothing was changed.
func usageError(format string, args ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// asUsage marks err as a usage error.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return &exitErr{code: exitUsage, err: err}
}

// app is one invocation of the command.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	// Persistent flags.
	output   string
	storeDir string
	wait     time.Duration

	// code is the exit code of a command that ended without an error
	// (parked: 3).
	code int
	// fr opens sessions (front).
	fr *stock.Front
	// layered are the settings read last, with the flags over them when
	// a command drives threads (driveFlags.setup): the record names their
	// sources.
	layered stock.Layered
	// printed: a JSON document is on stdout already.
	printed bool
	// commandTimeout is run_command's default timeout in the workspace
	// open, to show with a command.
	commandTimeout time.Duration
	// signal is the signal that interrupted the command, if one did.
	signal atomic.Value
	// lines writes the stream's lines to stdout (-o stream-json, log -f
	// -o jsonl).
	lines *drive.LineWriter
	// followLog: the command is log --follow (with -o jsonl, the stream).
	followLog bool
}

// run runs the command line args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, lines: &drive.LineWriter{W: stdout}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case sig := <-sigs:
			a.signal.Store(sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	// Spans go where the environment says (OTEL_EXPORTER_OTLP_ENDPOINT,
	// HARNESS_TRACE=stdout), or nowhere.
	tp, shutdown, err := tracing.Setup(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "harness: tracing: %v\n", err)
		return exitUsage
	}
	defer shutdown(context.WithoutCancel(ctx))
	otel.SetTracerProvider(tp)
	root := a.rootCmd()
	root.SetArgs(joinNetworkValue(args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err = root.ExecuteContext(ctx)
	code, err := a.exitOf(err)
	if sig, ok := a.signal.Load().(os.Signal); ok && code != exitOK {
		// Interrupted: whatever stopped, it stopped because of the signal.
		code = exitInterrupted
		if sig == syscall.SIGTERM {
			code = 128 + int(syscall.SIGTERM)
		}
		if err == nil {
			err = errors.New("interrupted")
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "harness: %s\n", tell.PersonError(err))
		if code == exitUsage && isCobraError(err) {
			fmt.Fprintln(stderr, "Run 'harness help' for usage.")
		}
	}
	if a.streamOut() && !a.lines.Ended() && code != exitOK && code != exitParked {
		// -o stream-json: the stream ends with a result line, a
		// failure's too.
		a.lines.Result(drive.Result{Status: failedStatus(code), Exit: code, Error: errorDoc(code, err).Error.Message})
	}
	if code != exitOK && code != exitParked && !a.printed && wantsJSON(a.output, args) {
		// -o json: stdout is always one document, a failure's too.
		a.printJSON(errorDoc(code, err))
	}
	return code
}

// exitOf is the exit code of the error a command returned, and the error
// to print (nil when there is nothing to say, or it was said).
func (a *app) exitOf(err error) (int, error) {
	if err == nil {
		return a.code, nil
	}
	var ee *exitErr
	if errors.As(err, &ee) {
		return ee.code, ee.err
	}
	// Cobra's own errors: an unknown command or flag, a wrong number of
	// arguments.
	return exitUsage, cobraError{err}
}

// cobraError is an error of the command line that cobra found.
type cobraError struct{ error }

func (e cobraError) Unwrap() error { return e.error }

func isCobraError(err error) bool {
	var ce cobraError
	return errors.As(err, &ce)
}

// wantsJSON reports whether the command line asks for -o json, read from
// the flag when it was parsed, else from the arguments (a command line
// cobra could not parse still gets its document).
func wantsJSON(output string, args []string) bool {
	if output == "json" {
		return true
	}
	for i, arg := range args {
		switch {
		case arg == "--":
			return false
		case arg == "-ojson", arg == "-o=json", arg == "--output=json":
			return true
		case (arg == "-o" || arg == "--output") && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// errorDoc is what -o json prints for a command that failed with code.
func errorDoc(code int, err error) tell.ErrorDoc {
	return tell.ErrorDocOf(code, code == exitUsage, err)
}

// rootCmd is the command tree.
func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "harness",
		Short: "Run coding agents as event-sourced threads, and audit what they did",
		Long: `harness runs coding agents as threads: append-only logs of facts kept in the
workspace's store (.harness/ at the workspace root, found from the current
directory as git finds .git; --store or HARNESS_STORE name another directory,
or a NATS server, nats://HOST:PORT, whose JetStream keeps the threads;
HARNESS_REPLICAS=3 gives a NATS store made on a cluster 3 replicas).

A tool call that asks for confirmation parks the thread until a person answers:
at the prompt on a terminal, or with approve, deny, answer or post.

Exit codes: 0 done, 1 error, 2 usage, 3 parked (waiting for a person),
130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Only so that cobra makes --version: what it prints is
		// versionText's, which reads the build info only then.
		Version: "see versionText",
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			switch a.output {
			case "text", "json":
			case "jsonl":
				if cmd.Name() != "log" {
					return usageError("-o jsonl is for `harness log`; use -o text or -o json")
				}
			case "stream-json":
				if err := streamRefuses(cmd); err != nil {
					return err
				}
			default:
				return usageError("-o %q: want text or json", a.output)
			}
			if a.wait < 0 {
				return usageError("--wait %v: want a duration ≥ 0, such as 30s", a.wait)
			}
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return asUsage(cobraError{err}) })
	// The flag is made before parsing, so that "--version -o json" parses
	// as two flags; the template prints the line or the JSON (versionText).
	root.InitDefaultVersionFlag()
	root.SetVersionTemplate("{{harnessVersion .}}")
	pf := root.PersistentFlags()
	a.output = "text"
	pf.VarP(outputFlag{&a.output}, "output", "o", "output format: text or json (json: stdout is pure JSON; logs go to stderr); stream-json for run, resume, continue and the answers with --resume: JSON Lines as it happens")
	pf.StringVar(&a.storeDir, "store", "", "the store directory, or a NATS server nats://HOST:PORT (default: .harness at the workspace root; or $HARNESS_STORE)")
	pf.DurationVar(&a.wait, "wait", 0, "wait this long for a store another harness process is using (e.g. 30s)")
	root.AddCommand(
		a.runCmd(), a.resumeCmd(), a.continueCmd(), a.planCmd(),
		a.postCmd(), a.approveCmd(true), a.approveCmd(false), a.answerCmd(),
		a.threadsCmd(), a.logCmd(), a.replayCmd(), a.showCmd(), a.effectsCmd(),
		a.forkCmd(), a.rerunCmd(), a.undoCmd(), a.stopCmd(), a.budgetCmd(), a.configCmd(), a.trustCmd(), a.keyCmd(), a.sealCmd(), a.demoCmd(), a.mcpCmd(), a.serveCmd(),
		a.submitCmd(), a.workerCmd(), a.migrateCmd(), a.searchCmd(), a.agentsCmd(),
	)
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "jsonl", "stream-json"}, cobra.ShellCompDirectiveNoFileComp))
	return root
}

// runE wraps a command's body: an error it returns that carries no exit
// code is an error (1).
func runE(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := f(cmd, args)
		var ee *exitErr
		if err != nil && !errors.As(err, &ee) {
			return &exitErr{code: exitError, err: err}
		}
		return err
	}
}

// args checks the number of positional arguments, as a usage error.
func args(min, max int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return argsN(cmd, args, min, max, names)
	}
}

// argsN checks that there are min to max arguments (max < 0: no bound).
func argsN(cmd *cobra.Command, args []string, min, max int, names string) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return usageError("%s: want %s (got %s); see 'harness %s --help'", cmd.Name(), names, present.Plural(len(args), "argument", "arguments"), cmd.Name())
	}
	return nil
}

// version is the program's version (tell.ModuleVersion).
var version = tell.ModuleVersion

// commit is the commit the program was built from when the build
// records none (-buildvcs=false, a build outside the checkout): set it
// with -ldflags "-X main.commit=$(git rev-parse HEAD)".
var commit = ""

// jsonOut reports whether stdout is JSON.
func (a *app) jsonOut() bool { return a.output == "json" }

// textOut reports whether stdout is for people (-o text).
func (a *app) textOut() bool { return a.output == "text" }

// printJSON writes v to stdout as one JSON document.
func (a *app) printJSON(v any) error {
	a.printed = true
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printf writes text to textWriter.
func (a *app) printf(format string, args ...any) { fmt.Fprintf(a.textWriter(), format, args...) }

// textWriter is where text goes: stdout, unless stdout is JSON (then
// stderr).
func (a *app) textWriter() io.Writer {
	if a.jsonOut() || a.streamOut() {
		return a.stderr
	}
	return a.stdout
}

// interactive reports whether the command may ask at the prompt: text
// output, stdin and stdout both terminals, and not --no-input.
func (a *app) interactive(noInput bool) bool {
	return !noInput && a.textOut() && tell.IsTerminal(a.stdin) && tell.IsTerminal(a.stdout)
}

// colored reports whether to colour the output: a terminal, text, and
// neither NO_COLOR nor TERM=dumb.
func (a *app) colored() bool {
	return a.textOut() && a.getenv("NO_COLOR") == "" && a.getenv("TERM") != "dumb" && tell.IsTerminal(a.stdout)
}

// paint wraps s in an ANSI colour when colouring.
func (a *app) paint(color, s string) string {
	if !a.colored() {
		return s
	}
	return tell.ANSI(color, s)
}

// whoami is who answers, for the record (stock.Whoami).
func (a *app) whoami() string { return stock.Whoami(a.getenv) }

// checkBy refuses a --by that names anyone but the local user: the record
// says who answered, and a name typed on the command line would let
// anything that can run harness say it is anyone.
func (a *app) checkBy(by string) error {
	if by == "" || by == a.whoami() {
		return nil
	}
	return usageError("--by %q: an answer records who gives it, and you are %s; it cannot name someone else (leave --by out; to answer as another person, use a server's page with their token)", by, a.whoami())
}

// front is how the command opens sessions (stock.Front): its warnings
// go to stderr.
func (a *app) front() *stock.Front {
	if a.fr == nil {
		a.fr = &stock.Front{Store: a.storeDir, Getenv: a.getenv, Wait: a.wait, Version: "harness/" + version(),
			Warn: func(line string) { fmt.Fprintf(a.stderr, "harness: %s\n", line) }}
	}
	return a.fr
}

// place locates the workspace of the current directory.
func (a *app) place() (stock.Place, error) {
	p, err := a.front().Place()
	if errors.Is(err, stock.ErrReplicas) {
		return p, asUsage(err)
	}
	return p, err
}

// openRead opens the workspace's store for a command that only reads it
// (threads, log, replay, effects): read-only, so that it works on a full
// disk.
func (a *app) openRead(ctx context.Context) (*stock.Session, error) {
	return a.openSession(ctx, nil, stock.SessionOptions{Lenient: true, ReadOnly: true})
}

// newSession reads the place's settings with the flags f laid over them
// (nil: none), checks them and makes the stock harness (see
// stock.NewSession), saying what untrusted files were left out and, for
// a lenient session, which file could not be read. The store is not
// opened yet.
func (a *app) newSession(p stock.Place, f *driveFlags, o stock.SessionOptions) (*stock.Session, error) {
	if f != nil {
		flags, err := f.layer()
		if err != nil {
			return nil, err
		}
		o.Flags = flags
		schema, err := f.outputOption()
		if err != nil {
			return nil, err
		}
		if schema != nil {
			o.Harness = append(o.Harness, schema)
		}
	}
	ss, err := a.front().NewSession(p, o)
	switch {
	case errors.Is(err, stock.ErrBadSettings), errors.Is(err, stock.ErrModelSpec):
		return nil, asUsage(err)
	case err != nil:
		return nil, err
	}
	a.layered = ss.Layered
	a.commandTimeout = ss.Stock.Tools.Limits().CommandTimeout
	return ss, nil
}

// openSession opens the workspace's store as o says, with the flags f
// (nil: none) over its settings (see newSession); a server is started
// first when the settings ask for one (autoServe).
func (a *app) openSession(ctx context.Context, f *driveFlags, o stock.SessionOptions) (*stock.Session, error) {
	p, err := a.place()
	if err != nil {
		return nil, err
	}
	s, err := a.newSession(p, f, o)
	if err != nil {
		return nil, err
	}
	if err := a.autoServe(ctx, p, s.Settings(), o.Create); err != nil {
		s.Close()
		return nil, err
	}
	if err := a.openStore(ctx, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openStore opens the session's store, saying what to do when it cannot.
func (a *app) openStore(ctx context.Context, s *stock.Session) error {
	err := a.front().Open(ctx, s)
	switch {
	case errors.Is(err, stock.ErrNoStore):
		return fmt.Errorf("%w; start a thread with `harness run`, or name a store with --store", err)
	case errors.Is(err, thread.ErrLocked) && a.wait > 0:
		return fmt.Errorf("%w; wait longer with a larger --wait", err)
	case errors.Is(err, thread.ErrLocked):
		return fmt.Errorf("%w; wait for the other harness command to finish, or pass --wait DURATION (e.g. --wait 30s) to wait for it; `harness serve` (or run --serve) holds the store so that every command can use it at once", err)
	case errors.Is(err, natsstore.ErrOldLayout):
		return fmt.Errorf("%w; the command: harness migrate, with the same --store", err)
	case err != nil:
		return err
	}
	return nil
}

// openThread checks id, opens the store, and makes sure the thread is
// there; the caller closes the session.
func (a *app) openThread(ctx context.Context, id string) (*stock.Session, error) {
	return a.openThreadTo(ctx, id, false)
}

// openThreadRead is openThread for a command that only reads the thread.
func (a *app) openThreadRead(ctx context.Context, id string) (*stock.Session, error) {
	return a.openThreadTo(ctx, id, true)
}

func (a *app) openThreadTo(ctx context.Context, id string, read bool) (*stock.Session, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	s, err := a.openSession(ctx, nil, stock.SessionOptions{Lenient: true, ReadOnly: read})
	if err != nil {
		return nil, err
	}
	if err := a.threadExists(ctx, s, id); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// threadExists reports an unknown thread of s as an error that says what
// to do.
func (a *app) threadExists(ctx context.Context, s *stock.Session, id string) error {
	if err := thread.ValidateID(id); err != nil {
		return asUsage(err)
	}
	if _, err := s.Store.Head(ctx, id); errors.Is(err, thread.ErrNotFound) {
		return fmt.Errorf("thread %q: %w in %s; `harness threads` lists the threads", id, harness.ErrUnknownThread, s.Place.Where())
	} else if err != nil {
		return err
	}
	return nil
}

// checkID refuses a malformed thread id before anything is opened.
func checkID(id string) error {
	if err := thread.ValidateID(id); err != nil {
		return asUsage(fmt.Errorf("thread id %q: %w", id, err))
	}
	return nil
}
