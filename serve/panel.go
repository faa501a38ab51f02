package serve

import (
	"bytes"
	"context"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// The thread page follows its thread without asking for what it has
// again. Each new fact comes on the page's stream with its timeline row
// and, for a fact of an action, that action's row of the actions table as
// it stands then: the page applies both. What it asks for again after new
// facts is the panel — the status, what waits, the verdict on the
// record — which reads the thread's kept view and extends the thread's
// kept verification (an audit.Follower) by the new facts: its cost does
// not grow with the log.

// verdict is the verdict on the thread's record: its kept follower
// brought up to date.
func (s *Server) verdict(ctx context.Context, id string) (bool, string, error) {
	c := s.cachedThread(ctx, id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.record == nil {
		c.record = audit.Follow(s.store, s.opts.Stock.Actor, id)
	}
	seq, bad, err := c.record.Update(ctx)
	switch {
	case err != nil:
		return false, "", err
	case bad != nil:
		return false, bad.Error(), nil
	}
	text := present.Plural(seq, "fact", "facts") + ": the hash chain is intact, every caused fact was enabled by the fold at its position, every action record is consistent"
	if c.record.Tree() {
		text += "; the tree: its child threads verify, each spawn has its child, and each report names its child's final head"
	}
	return true, text, nil
}

// actionOfFact returns the id of the action a fact records, if it
// records one.
func actionOfFact(f facts.Fact) (string, bool) {
	switch f.Kind {
	case facts.KindActionRequested:
		return actionID(f, func(p facts.ActionRequested) string { return p.ActionID })
	case facts.KindActionStarted:
		return actionID(f, func(p facts.ActionStarted) string { return p.ActionID })
	case facts.KindActionCompleted:
		return actionID(f, func(p facts.ActionCompleted) string { return p.ActionID })
	case facts.KindActionInterrupted:
		return actionID(f, func(p facts.ActionInterrupted) string { return p.ActionID })
	case facts.KindCheckRecorded:
		return actionID(f, func(p facts.CheckRecorded) string { return p.ActionID })
	case facts.KindEffectReconciled:
		return actionID(f, func(p facts.EffectReconciled) string { return p.ActionID })
	}
	return "", false
}

// actionID decodes f's payload as a T and returns the action id it names.
func actionID[T any](f facts.Fact, id func(T) string) (string, bool) {
	p, err := facts.Decode[T](f)
	return id(p), err == nil && id(p) != ""
}

// actionRow is the actions table's row of the action fact f records, as
// the thread's kept view has the action now (ok false for a fact of no
// action, or one the view does not know).
func (s *Server) actionRow(ctx context.Context, f facts.Fact) (id, html string, ok bool) {
	id, ok = actionOfFact(f)
	if !ok {
		return "", "", false
	}
	c := s.cachedThread(ctx, f.Thread)
	c.mu.Lock()
	v, err := c.th.View(ctx)
	a, found := v.Turn.Action(id)
	denied := found && deniedIn(v.Turn, a)
	if err == nil && !found {
		// An action of an earlier turn (a reconciliation comes in the
		// turn it stopped, so rarely): the whole reading has it.
		var r scheduler.Reading
		if r, err = c.th.Reading(ctx); err == nil {
			a, found = r.Action(id)
			denied = found && deniedIn(r, a)
		}
	}
	c.mu.Unlock()
	if err != nil || !found {
		return "", "", false
	}
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, "action", s.actionOf(ctx, a, denied)); err != nil {
		s.opts.Logf("render action %s of %s: %v", id, f.Thread, err)
		return "", "", false
	}
	return id, b.String(), true
}
