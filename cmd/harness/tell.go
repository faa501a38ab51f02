package main

import (
	"context"
	"io"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present/ask"
	"github.com/seed-7cc7a084/harness/tell"
)

// The renderings of package tell that the commands call by these names.
var (
	shellWord   = tell.ShellWord
	shortDigest = tell.ShortDigest
)

// teller tells how threads stand on stdout, as this command paints.
func (a *app) teller() tell.Teller {
	return tell.Teller{W: a.stdout, Paint: a.paint, CommandTimeout: a.commandTimeout, Answer: answerHint, After: afterState}
}

// printState tells how a thread stands (tell.Teller.State).
func (a *app) printState(st drive.State, root string) { a.teller().State(st, root) }

// printPending describes one open request (tell.Teller.Pending).
func (a *app) printPending(p drive.Pending, root string) { a.teller().Pending(p, root) }

// factLine is one fact, for a person (tell.FactLine).
func (a *app) factLine(f facts.Fact) string { return tell.FactLine(f) }

// prompter asks a person at the terminal (ask.Prompter), by the names
// the prompts call.
type prompter struct{ *ask.Prompter }

func newPrompter(in io.Reader, out io.Writer) *prompter { return &prompter{ask.New(in, out)} }

func (p *prompter) ask(ctx context.Context, question string) (string, error) {
	return p.Line(ctx, question)
}

func (p *prompter) askKey(ctx context.Context, question string) (string, error) {
	return p.Key(ctx, question)
}

// errNoAnswer: the input ended before an answer.
var errNoAnswer = ask.ErrNoAnswer
