package main

import (
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/tell"
)

// teller tells how threads stand on stdout, as this command paints.
func (a *app) teller() tell.Teller {
	return tell.Teller{W: a.stdout, Paint: a.paint, CommandTimeout: a.commandTimeout, Answer: answerHint, After: afterState}
}

// printState tells how a thread stands (tell.Teller.State).
func (a *app) printState(st drive.State, root string) { a.teller().State(st, root) }

// printPending describes one open request (tell.Teller.Pending).
func (a *app) printPending(p drive.Pending, root string) { a.teller().Pending(p, root) }
