package main

import (
	"context"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/stock"
)

// follow prints the thread's facts from seq from on, as log does, and
// then the facts appended after them, until the thread ends
// (stock.Session.Follow); it returns what run returns for how it ended. A
// done ctx (Ctrl-C) leaves it.
func (a *app) follow(ctx context.Context, s *stock.Session, id string, from uint64) error {
	print, last := a.printFact, []facts.Fact(nil)
	if a.followLog = true; a.streamOut() {
		print = func(fact facts.Fact) error {
			if fact.Kind == facts.KindModelTurn {
				last = []facts.Fact{fact} // its text is the result line's
			}
			return a.lines.Fact(fact)
		}
	}
	st, err := s.Follow(ctx, id, from, print)
	if err != nil {
		return err
	}
	// Say how the thread ended, as run does, and return run's result.
	return a.report(st, last, s)
}
