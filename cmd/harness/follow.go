package main

import (
	"context"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// follow prints the thread's facts from seq from on, as log does, and
// then the facts appended after them, until the thread ends
// (stock.Session.Follow); it returns what run returns for how it ended. A
// done ctx (Ctrl-C) leaves it.
func (a *app) follow(ctx context.Context, s *session, id string, from uint64) error {
	print, text := a.printFact, ""
	if a.followLog = true; a.streamOut() {
		print = func(fact facts.Fact) error {
			if fact.Kind == facts.KindModelTurn {
				// The text of the last model turn, for the result line.
				text = drive.LastText([]facts.Fact{fact})
			}
			return a.lines.Fact(fact)
		}
	}
	st, err := s.Follow(ctx, id, from, print)
	if err != nil {
		return err
	}
	// Say how the thread ended, as run does, and return run's result.
	switch {
	case a.streamOut():
		if err := a.lines.Result(drive.ResultOf(st, statusExit(st.Status), text)); err != nil {
			return err
		}
	case a.textOut():
		a.printState(st, s.Place.Root)
	}
	switch st.Status {
	case harness.StatusDone:
		return nil
	case harness.StatusParked:
		a.code = exitParked
		return nil
	}
	return &exitErr{code: exitError} // said above, or in the facts
}
