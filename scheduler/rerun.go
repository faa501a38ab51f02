package scheduler

import (
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// A rerun (package rerun) offers another model a recorded thread's
// conversation. After each model turn the Rerun effect compares the turn
// with the original's and its verdict is recorded as rerun.turn, in the
// same append, after the model.turn:
//
//	model.turn → rerun.turn (served)  → action.requested (served, no confirmation)
//	                                  → action.completed (the original's, copied)
//	                                    [+ check.recorded, the original's]
//	model.turn → rerun.turn (diverged, stop) → the thread stops: nothing more
//	model.turn → rerun.turn (diverged, live) → the calls go on as any call does
//
// A served call runs nothing and asks nobody: its request names the
// original's completion (facts.Served), and the execute transition copies
// it through Env.Serve. The fold reads which calls are served from the
// log alone, so a replay decides as the run did.

// compared describes appending the rerun.turn of a model turn to its
// drafts, when the thread is a rerun.
func (s *state[S]) compared(turn int, mt facts.ModelTurn, out []facts.Draft) effect.Effect[S, []facts.Draft] {
	if s.env.Rerun == nil {
		if s.offersFrom != "" {
			return effect.Fail[S, []facts.Draft](fmt.Errorf("turn %d of this rerun of %s was not compared with the original's: nothing here serves a rerun, and its calls would run for real; go on with it where it is served from %s's log", turn, s.offersFrom, s.offersFrom))
		}
		return effect.Succeed[S](out)
	}
	going := s.offersFrom
	return effect.AndThen(s.env.Rerun(s.thread, turn, mt), func(rt *facts.RerunTurn) effect.Effect[S, []facts.Draft] {
		if rt == nil && going != "" {
			// The turn before was served, and nothing compares this one:
			// its calls would run for real, where a rerun runs nothing.
			return effect.Fail[S, []facts.Draft](fmt.Errorf("turn %d of this rerun of %s was not compared with the original's: nothing here serves a rerun, and its calls would run for real; go on with it where it is served from %s's log", turn, going, going))
		}
		if rt == nil {
			return effect.Succeed[S](out)
		}
		p := *rt
		p.Turn = turn
		if p.Diverged == nil && len(p.Served) != len(mt.ToolCalls) {
			return effect.Die[S, []facts.Draft](fmt.Errorf("rerun turn %d: %d served results for %d calls", turn, len(p.Served), len(mt.ToolCalls)))
		}
		d, err := facts.NewDraft(facts.KindRerunTurn, "", p)
		if err != nil {
			return effect.Die[S, []facts.Draft](err)
		}
		return effect.Succeed[S](append(out, d))
	})
}

// rerunTurn folds a rerun.turn: the latest turn's calls are served, or
// the rerun stopped at its divergence.
func (s *state[S]) rerunTurn(_ facts.Fact, p facts.RerunTurn) {
	if p.Turn != s.turns {
		s.missed = true
		return
	}
	if p.Stop {
		d := p.Diverged
		s.halted = fmt.Sprintf("the rerun of %s diverged at turn %d (%s): %s", p.From, p.Turn, d.Why, d.Detail)
		return
	}
	if p.Diverged != nil {
		return
	}
	s.offers, s.offersFrom, s.offeredN = p.Offers, p.From, 0
	for i, c := range s.calls {
		if i < len(p.Served) {
			sv := p.Served[i]
			c.served = &sv
		}
	}
}

// serveRequest records the request of a served call: no confirmation,
// no precheck, no sandbox — nothing will run — and the check the
// original declared, served with its result.
func (s *state[S]) serveRequest(c *call, id string) fold.Transition[S] {
	tc := c.call
	sv := *c.served
	capability := sv.Capability
	if capability == "" {
		capability = action.Read
	}
	f := facts.ActionRequested{
		ActionID:       id,
		CallID:         tc.ID,
		Capability:     capability,
		Instruction:    fmt.Sprintf("%s %s", tc.Name, tc.Args),
		IdempotencyKey: executeKey(id),
		RequestedBy:    s.env.Actor,
		ActorID:        s.env.Actor,
		Adapter:        tc.Name,
		Check:          sv.Check,
		Served:         &sv,
	}
	if facts.CheckJSON([]byte(tc.Args)) == nil {
		f.Payload = facts.RawJSON(tc.Args)
	}
	return fold.Transition[S]{Key: requestKey(id), Effect: drafts[S](facts.KindActionRequested, f)}
}

// serve completes a served request with the original's recorded result.
func (s *state[S]) serve(a *Action) fold.Transition[S] {
	from := *a.Requested.Served
	req := action.FromFact(a.Requested)
	if s.env.Serve == nil {
		return fold.Transition[S]{Key: executeKey(a.ID), Effect: effect.Fail[S, []facts.Draft](
			fmt.Errorf("action %s is served from %s seq %d, but nothing serves recorded results here: rerun it", a.ID, from.Thread, from.Seq))}
	}
	return fold.Transition[S]{Key: executeKey(a.ID), Effect: s.env.Serve(req, from)}
}

// offeredNow counts f, a copy of the next fact offered, when from names
// it and the offer's transition appended it (a person's post naming a
// seq is only a message).
func (s *state[S]) offeredNow(f facts.Fact, from *facts.Served) {
	if from == nil || s.offeredN >= len(s.offers) || facts.IsIngress(f.Cause) {
		return
	}
	if o := s.offers[s.offeredN]; o.Kind == f.Kind && o.Seq == from.Seq && from.Thread == s.offersFrom {
		s.offeredN++
	}
}

// offer puts, in a rerun, the next fact offered in place of what waits
// for it: the wait for the answer to the turn's question (an answer), or
// the next model turn, or the end (a message). Before then, or when the
// thread stopped, it changes nothing.
func (s *state[S]) offer(v *View, out *fold.Output[S]) {
	if s.offeredN >= len(s.offers) || out.Stop != nil {
		return
	}
	o := s.offers[s.offeredN]
	requestID := ""
	switch o.Kind {
	case facts.KindQuestionAnswered:
		q := s.question
		if q == nil || q.Asked == nil || q.Answer != nil || len(s.calls) > 0 {
			return
		}
		requestID = q.Asked.RequestID
		i := slices.IndexFunc(v.Waits, func(w fold.Wait) bool { return w.Kind == fold.WaitQuestion && w.RequestID == requestID })
		if i < 0 {
			return
		}
		v.Waits = slices.Delete(slices.Clone(v.Waits), i, i+1)
	case facts.KindUserMessage:
		if len(v.Waits) > 0 {
			return
		}
		key := inferKey(s.turns + 1)
		i := slices.IndexFunc(out.Transitions, func(t fold.Transition[S]) bool { return t.Key == key })
		switch {
		case i >= 0:
			out.Transitions = slices.Delete(slices.Clone(out.Transitions), i, i+1)
		case len(out.Transitions) == 0 && v.Phase == PhaseDone:
			v.Phase, v.Output = PhaseInfer, nil
		default:
			return
		}
	default:
		return
	}
	from := facts.Served{Thread: s.offersFrom, Seq: o.Seq}
	key := offerKey(s.turns, s.offeredN)
	if s.env.Offer == nil {
		out.Transitions = append(out.Transitions, fold.Transition[S]{Key: key, Effect: effect.Fail[S, []facts.Draft](
			fmt.Errorf("the rerun offers %s seq %d here, but nothing offers recorded facts here: rerun it", from.Thread, from.Seq))})
		return
	}
	out.Transitions = append(out.Transitions, fold.Transition[S]{Key: key, Effect: s.env.Offer(from, o.Kind, requestID)})
}
