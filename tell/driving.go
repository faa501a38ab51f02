package tell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tools"
)

// The outputs a Terminal writes (Report.Output).
const (
	OutputText   = "text"
	OutputJSON   = "json"
	OutputStream = "stream-json"
)

// Report tells how a thread a command drove stands, as its output says:
// the state for a person (Teller.State), the JSON document (Result), or
// the stream's result line (drive.ResultOf).
type Report struct {
	// Teller tells the state to a person; its Answer also names the
	// command that answers each open request in the JSON document.
	Teller
	// Output is OutputText, OutputJSON or OutputStream.
	Output string
	// Lines writes the stream (OutputStream).
	Lines *drive.LineWriter
	// JSON prints one JSON document (OutputJSON).
	JSON func(v any) error
	// Session is the workspace the command acts in: a call to confirm is
	// previewed in it when the thread works there.
	Session *stock.Session
	// GoOn says how to go on with a thread that stopped (Result.Hint);
	// nil says nothing.
	GoOn func(st drive.State) string
}

// Tell tells how st stands after the command appended the facts
// appended, and returns the exit code of a command that leaves the
// thread so (drive.ExitOf).
func (r Report) Tell(st drive.State, appended []facts.Fact) (int, error) {
	code := drive.ExitOf(st.Status)
	switch r.Output {
	case OutputStream:
		return code, r.Lines.Result(drive.ResultOf(st, code, drive.LastText(appended)))
	case OutputJSON:
		return code, r.JSON(r.Result(st, appended))
	}
	r.State(st, r.Session.Place.Root)
	return code, nil
}

// Result is the JSON document of st (ResultOf): with the preview of each
// call to confirm when the thread works in the session's workspace.
func (r Report) Result(st drive.State, appended []facts.Fact) Result {
	if st.Workspace == "" || st.Workspace == r.Session.Stock.Config.Workspace {
		st.Preview(r.Session.Place.Root, tools.Preview)
	}
	hint := ""
	if r.GoOn != nil {
		hint = r.GoOn(st)
	}
	return ResultOf(st, hint, r.Answer, appended)
}

// TerminalHints are what a Terminal says that names the command line's
// commands and flags: the command line gives them. One left nil says
// the plain error.
type TerminalHints struct {
	// NoModel is the error of a thread that needs a model turn and
	// records no model; Model the error of a model that cannot be loaded.
	NoModel func(id string) error
	Model   func(id string, err error) error
	// Interrupted is the error of a drive of the thread id that an
	// interrupt stopped: it is resumable.
	Interrupted func(id string) error
	// NoSandbox is the warning that commands cannot run in the sandbox
	// here (err says why).
	NoSandbox func(err error) string
	// Held is the line said when another process drives the thread id
	// the command goes on with: it waits until that process lets go.
	Held func(id string) string
}

// Terminal drives threads for a command at a terminal (stock.Driver): it
// asks a person at the prompt when Interactive (closing the store
// meanwhile), shows each fact as it is appended — a line for a person,
// or a line of the stream — and tells how the thread ends (Report).
type Terminal struct {
	*stock.Driver
	Report
	// Err is where errors and warnings go.
	Err io.Writer
	// Say writes a line for a person (on Err when the output is JSON).
	Say func(format string, args ...any)
	// ID is the thread driven ("" until a run picks it); Thread it, on
	// the driver's runtime.
	ID     string
	Thread *harness.Thread
	// Retry: the command is a person's word to go on, so a failed model
	// turn is run once more (once per command).
	Retry bool
	// Appended are the facts of the thread shown while this command
	// drove it: appended by it, or by another process meanwhile.
	Appended []facts.Fact
	// Asker asks at the terminal (nil: nobody is asked); Live shows a
	// running action's output on a terminal.
	Asker *Asker
	Live  *Live
	Hints TerminalHints

	// first is the thread of the first fact appended, when ID is not
	// known yet (a run picking the next id): the facts of other threads
	// are its children's.
	first string
	// warned: the sandbox's absence was said.
	warned bool
}

// TerminalOptions are how NewTerminal drives: the model loaded already
// (and its spec), whether a person is asked, and the Asker's and Live's
// settings.
type TerminalOptions struct {
	Model       model.Model
	Spec        string
	Interactive bool
	// Live shows progress on a terminal (Out is one, and the output is
	// text).
	Live bool
	// Asker asks when Interactive: its Teller, Session, Live and Driver
	// are filled in.
	Asker *Asker
	// AskedHint is Live.Hint: how to answer an MCP server's question
	// elsewhere.
	AskedHint func(e drive.Event) string
	// OwnFiles are the command's output files (stock.DriverOptions).
	OwnFiles []io.Writer
}

// NewTerminal makes a Terminal of the thread id on the session's open
// store, deciding with approval: t's Report, Err, Say and Hints are
// kept, the rest made.
func NewTerminal(t Terminal, approval drive.Approval, id string, o TerminalOptions) (*Terminal, error) {
	t.ID = id
	t.Live = NewLive(t.W, o.Live)
	t.Live.Hint = o.AskedHint
	if o.Interactive && o.Asker != nil {
		t.Asker = o.Asker
		t.Asker.Teller, t.Asker.Session, t.Asker.Live = t.Teller, t.Session, t.Live
	}
	// What the thread does between its facts: the stream's progress
	// lines, or on a terminal (Live.Progress).
	progress := t.Live.Progress(t.Asker)
	if t.Output == OutputStream {
		progress = t.Lines.Progress
	}
	do := stock.DriverOptions{Model: o.Model, Spec: o.Spec, Show: t.show, Progress: progress,
		ModelWait: func(_ int, wait time.Duration, err error) { t.Say("%s\n", Waiting(t.Paint, wait, err)) }}
	// The observer leaves out this command's own output, should it be
	// redirected into the workspace.
	for _, w := range o.OwnFiles {
		if f, ok := w.(*os.File); ok {
			do.OwnFiles = append(do.OwnFiles, f)
		}
	}
	dr, err := t.Session.NewDriver(approval, do)
	if err != nil {
		return nil, err
	}
	t.Driver = dr
	t.Thread = dr.Thread(id)
	if t.Asker != nil {
		t.Asker.Driver = dr
	}
	return &t, nil
}

// show shows a fact of the thread driven as the store has it (the
// driver's Tail: appended here, or by another process meanwhile) on a
// terminal (Live.Fact), or writes its line of the stream; OutputJSON
// prints the facts at the end. The Tail calls it from one goroutine at a
// time.
func (t *Terminal) show(f facts.Fact, err error) {
	if err != nil {
		fmt.Fprintf(t.Err, "harness: %s\n", PersonError(err))
		return
	}
	t.Appended = append(t.Appended, f)
	switch t.Output {
	case OutputStream:
		if err := t.Lines.Fact(f); err != nil {
			fmt.Fprintf(t.Err, "harness: %s\n", PersonError(err))
		}
	case OutputText:
		t.Live.Fact(f, t.lineOf(f))
	}
}

// lineOf is a fact appended while the thread is driven: a fact of one of
// its children says whose it is.
func (t *Terminal) lineOf(f facts.Fact) string {
	root := t.ID
	if root == "" {
		if t.first == "" {
			t.first = f.Thread
		}
		root = t.first
	}
	return TreeFactLine(f, root, t.Paint)
}

// Options drive the thread as the command does (stock.Driver.Options): a
// terminal asks what the approval does not decide, and what happens is
// told as it happens.
func (t *Terminal) Options() drive.Options {
	o := t.Driver.Options()
	o.Retry = t.Retry
	o.LoadModel = func(recorded string) (model.Model, error) {
		m, err := t.LoadModel(recorded)
		switch {
		case errors.Is(err, stock.ErrNoModel) && t.Hints.NoModel != nil:
			return nil, t.Hints.NoModel(t.ID)
		case err != nil && t.Hints.Model != nil:
			return nil, t.Hints.Model(t.ID, err)
		case err != nil:
			return nil, fmt.Errorf("thread %s: %w", t.ID, err)
		}
		return m, nil
	}
	o.Resume = func(ctx context.Context, th *harness.Thread, _ drive.State) (harness.Outcome, error) {
		out, err := th.Resume(ctx) // under Options.Progress
		t.Live.Stop()
		if err != nil && !errors.Is(err, harness.ErrDefect) {
			return out, t.Interrupted(ctx, th.ID(), err)
		}
		return out, nil
	}
	o.OnRetry = func(st drive.State) { t.Say("%s\n", Retrying(t.Paint, st)) }
	o.OnHeld = func(st drive.State) {
		if t.Hints.Held != nil {
			t.Say("harness: %s\n", t.Hints.Held(st.Thread))
			return
		}
		t.Say("harness: thread %s is driven by another process; waiting until it lets go (an interrupt stops waiting; the thread goes on there)\n", present.EscapeLine(st.Thread))
	}
	o.OnInDoubt = func(st drive.State) {
		for _, line := range InDoubt(t.Paint, st) {
			t.Say("%s\n", line)
		}
	}
	if t.Asker != nil {
		o.Ask = t.Asker.Ask
	}
	return o
}

// Interrupted explains an error that stopped a drive of the thread id: a
// cancelled context leaves the thread resumable. The id is the
// thread's, not the terminal's: one made for many threads (harness as an
// MCP server's) names none.
func (t *Terminal) Interrupted(ctx context.Context, id string, err error) error {
	switch {
	case ctx.Err() != nil && t.Hints.Interrupted != nil:
		return t.Hints.Interrupted(id)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted; thread %s is resumable: %w", id, ctx.Err())
	}
	return err
}

// WarnSandbox says, once, that commands cannot run in the sandbox here
// (the system lacks what it needs): they are refused, never run
// unsandboxed, unless the person turns the sandbox off.
func (t *Terminal) WarnSandbox() {
	if t.warned {
		return
	}
	t.warned = true
	if err := t.Session.Stock.Sandbox.Check(); err != nil && t.Hints.NoSandbox != nil {
		fmt.Fprintf(t.Err, "harness: %s\n", t.Hints.NoSandbox(err))
	} else if err != nil {
		fmt.Fprintf(t.Err, "harness: %s: commands are refused\n", present.EscapeLine(err.Error()))
	}
}

// Drive drives the thread until it is done or waits for a person, asking
// at the terminal meanwhile, and returns how it stands
// (stock.Driver.Finish; StepLimit).
func (t *Terminal) Drive(ctx context.Context) (drive.State, error) {
	defer t.Tail(ctx)() // what other processes append meanwhile is shown too
	return t.drive(ctx)
}

// drive is Drive, under a Tail.
func (t *Terminal) drive(ctx context.Context) (drive.State, error) {
	t.WarnSandbox()
	t.Asker.Begin(ctx)
	st, err := t.Finish(ctx, t.Thread, t.Options(), func(err error) {
		fmt.Fprintf(t.Err, "harness: %s (a search brings the index up to date)\n", present.EscapeLine(err.Error()))
	})
	t.Asker.End()
	t.Live.Stop()
	return t.StepLimit(st), err
}

// StepLimit says how to go on with a thread the command stopped at its
// most steps (stock.Driver.StepLimit): the command.
func (t *Terminal) StepLimit(st drive.State) drive.State {
	if st = t.Driver.StepLimit(st); st.Status == harness.StatusStepLimit {
		st.Reason += ": harness resume " + ShellWord(st.Thread)
	}
	return st
}

// Run starts the thread n (stock.Driver.StartThread) and drives it until
// it is done or waits for a person (Drive): it returns how it stands.
// The thread started, if any, is the Terminal's Thread (and ID) also when
// the start failed; a thread that exists already is
// harness.ErrThreadExists, settings that cannot start it
// stock.ErrBadSettings.
func (t *Terminal) Run(ctx context.Context, n stock.NewThread) (drive.State, error) {
	defer t.Tail(ctx)() // what other processes append meanwhile is shown too
	t.WarnSandbox()
	th, out, err := t.StartThread(ctx, n)
	t.Live.Stop()
	if th != nil {
		t.Thread, t.ID = th, th.ID()
	}
	switch {
	case errors.Is(err, harness.ErrThreadExists), errors.Is(err, stock.ErrBadSettings):
		return drive.State{}, err
	case err != nil && !errors.Is(err, harness.ErrDefect):
		return drive.State{}, t.Interrupted(ctx, t.ID, err)
	case out.Status == harness.StatusStepLimit:
		st, err := drive.StepLimited(ctx, t.Thread, out)
		return t.StepLimit(st), err
	}
	return t.drive(ctx)
}
