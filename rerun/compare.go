package rerun

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/thread"
)

// server is the harness.Rerunner of one rerun: it compares the rerun's
// turns with the original's recording and serves the original's results.
type server struct {
	store thread.Store
	orig  *Recording
	to    string
	live  bool

	// restore, for a live rerun, undoes in the scratch copy the
	// original's file effects after seq to.
	restore func(ctx context.Context, to uint64) error

	mu       sync.Mutex // guards diverged, liveErr and next
	diverged bool       // the rerun diverged: later turns are compared with nothing
	liveErr  error      // why the live rerun could not go on
	next     int        // the rerun's next model turn
}

// Compare returns the rerun.turn of the rerun's turn n: the calls served,
// or where and why the turn diverged. After a divergence it records
// nothing: a live rerun goes on as any thread does.
func (s *server) Compare(ctx context.Context, id string, n int, mt facts.ModelTurn) (*facts.RerunTurn, error) {
	if id != s.to {
		return nil, nil // another thread: no rerun's
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = n + 1
	if s.diverged {
		return nil, nil
	}
	rt := compareTurn(s.orig, n, mt)
	if rt.Diverged != nil {
		s.diverged = true
		rt.Stop = !s.live
		if s.live {
			// The copy as the original's was when its turn n began (as it
			// ended, when it has no turn n).
			to := s.orig.Head
			if rt.OriginalSeq > 0 {
				to = rt.OriginalSeq
			}
			if err := s.restore(ctx, to); err != nil {
				s.liveErr = err
				rt.Stop = true
				rt.Diverged.Detail += "; it does not go on live: " + err.Error()
			}
		}
	}
	return &rt, nil
}

// compareTurn compares the rerun's turn n with the recording's.
func compareTurn(orig *Recording, n int, mt facts.ModelTurn) facts.RerunTurn {
	rt := facts.RerunTurn{Turn: n, From: orig.Thread}
	o := orig.turn(n)
	diverge := func(why string, i int, oc, rc *facts.ToolCall, detail string) facts.RerunTurn {
		rt.Served = nil
		rt.Diverged = &facts.Divergence{Why: why, Call: i, Original: oc, Rerun: rc, Detail: detail}
		return rt
	}
	if o == nil {
		last := 0
		if k := len(orig.Turns); k > 0 {
			last = orig.Turns[k-1].N
		}
		var rc *facts.ToolCall
		if len(mt.ToolCalls) > 0 {
			rc = &mt.ToolCalls[0]
		}
		return diverge(facts.DivergedNoTurn, 0, nil, rc, fmt.Sprintf("the original has no turn %d: it ended after turn %d", n, last))
	}
	rt.OriginalSeq = o.Seq
	switch {
	case mt.Question != nil && o.Question == nil:
		return diverge(facts.DivergedQuestion, 0, nil, nil, fmt.Sprintf("it asks a person %q where the original did not ask", clip(mt.Question.Text)))
	case mt.Question == nil && o.Question != nil:
		return diverge(facts.DivergedQuestion, 0, nil, nil, fmt.Sprintf("the original asked a person %q; the rerun did not", clip(o.Question.Text)))
	case mt.Question != nil && !sameQuestion(*mt.Question, *o.Question):
		return diverge(facts.DivergedQuestion, 0, nil, nil, fmt.Sprintf("it asks %q where the original asked %q", clip(mt.Question.Text), clip(o.Question.Text)))
	}
	for i := 0; i < max(len(o.Calls), len(mt.ToolCalls)); i++ {
		switch {
		case i >= len(o.Calls):
			rc := mt.ToolCalls[i]
			return diverge(facts.DivergedExtraCall, i, nil, &rc, fmt.Sprintf("call %d, %s %s, is one the original did not make", i+1, rc.Name, clip(rc.Args)))
		case i >= len(mt.ToolCalls):
			oc := o.Calls[i].ToolCall
			if len(mt.ToolCalls) == 0 {
				return diverge(facts.DivergedEarlierStop, i, &oc, nil, fmt.Sprintf("it answered where the original called %s", oc.Name))
			}
			return diverge(facts.DivergedMissingCall, i, &oc, nil, fmt.Sprintf("it made %s; the original's call %d was %s %s", present.Plural(len(mt.ToolCalls), "call", "calls"), i+1, oc.Name, clip(oc.Args)))
		}
		oc, rc := o.Calls[i].ToolCall, mt.ToolCalls[i]
		if oc.Name != rc.Name {
			return diverge(facts.DivergedTool, i, &oc, &rc, fmt.Sprintf("call %d is %s where the original called %s", i+1, rc.Name, oc.Name))
		}
		if o.Calls[i].Digest != CallDigest(rc.Name, rc.Args) {
			return diverge(facts.DivergedArgs, i, &oc, &rc, fmt.Sprintf("call %d to %s has other arguments: %s", i+1, rc.Name, strings.Join(ArgsDiff(oc.Args, rc.Args), "; ")))
		}
	}
	for i, c := range o.Calls {
		if c.Completed == nil || c.Requested == nil {
			oc := c.ToolCall
			return diverge(facts.DivergedUnserved, i, &oc, &mt.ToolCalls[i], fmt.Sprintf("the original's call %d (%s) has no recorded result to serve", i+1, c.Name))
		}
		sv := facts.Served{Thread: orig.Thread, Seq: c.CompletedSeq, Asked: c.Asked, Capability: c.Requested.Capability}
		if c.Requested.Check != nil && c.Check != nil {
			chk := *c.Requested.Check
			sv.Check, sv.CheckSeq = &chk, c.CheckSeq
		}
		rt.Served = append(rt.Served, sv)
	}
	rt.Offers = slices.Clone(o.Offers)
	return rt
}

// sameQuestion reports whether two questions ask the same: the same
// text (spaces around it aside), the same options in the same order, and
// free text allowed in both or neither. Only then is the original's
// answer served.
func sameQuestion(a, b facts.Question) bool {
	return strings.TrimSpace(a.Text) == strings.TrimSpace(b.Text) && slices.Equal(a.Options, b.Options) && a.AllowFreeText == b.AllowFreeText
}

// Recorded returns the original's fact at from.Seq: a rerun is offered a
// copy of it (see facts.RerunTurn.Offers).
func (s *server) Recorded(ctx context.Context, from facts.Served) (facts.Fact, error) {
	if from.Thread != s.orig.Thread {
		return facts.Fact{}, fmt.Errorf("%s seq %d: %w: this rerun serves %s", from.Thread, from.Seq, ErrServe, s.orig.Thread)
	}
	f, err := factAt(ctx, s.store, from.Thread, from.Seq)
	if err != nil {
		return facts.Fact{}, err
	}
	if !s.offered(from.Seq) {
		return facts.Fact{}, fmt.Errorf("%s seq %d is no message or answer that followed one of its turns: %w", from.Thread, from.Seq, ErrServe)
	}
	return f, nil
}

// offered reports whether seq is one of the original's offers.
func (s *server) offered(seq uint64) bool {
	for _, t := range s.orig.Turns {
		for _, o := range t.Offers {
			if o.Seq == seq {
				return true
			}
		}
	}
	return false
}

// Serve returns the original's completion at from.Seq, and its check.
func (s *server) Serve(ctx context.Context, req action.Request, from facts.Served) (facts.ActionCompleted, *facts.CheckRecorded, error) {
	if from.Thread != s.orig.Thread {
		return facts.ActionCompleted{}, nil, fmt.Errorf("%s seq %d: %w: this rerun serves %s", from.Thread, from.Seq, ErrServe, s.orig.Thread)
	}
	f, err := factAt(ctx, s.store, from.Thread, from.Seq)
	if err != nil {
		return facts.ActionCompleted{}, nil, err
	}
	if f.Kind != facts.KindActionCompleted {
		return facts.ActionCompleted{}, nil, fmt.Errorf("%s seq %d is a %s: %w", from.Thread, from.Seq, f.Kind, ErrServe)
	}
	done, err := facts.Decode[facts.ActionCompleted](f)
	if err != nil {
		return facts.ActionCompleted{}, nil, err
	}
	if from.CheckSeq == 0 {
		return done, nil, nil
	}
	cf, err := factAt(ctx, s.store, from.Thread, from.CheckSeq)
	if err != nil {
		return facts.ActionCompleted{}, nil, err
	}
	if cf.Kind != facts.KindCheckRecorded {
		return facts.ActionCompleted{}, nil, fmt.Errorf("%s seq %d is a %s: %w", from.Thread, from.CheckSeq, cf.Kind, ErrServe)
	}
	check, err := facts.Decode[facts.CheckRecorded](cf)
	if err != nil {
		return facts.ActionCompleted{}, nil, err
	}
	if check.ActionID != done.ActionID {
		return facts.ActionCompleted{}, nil, fmt.Errorf("%s seq %d checks action %s, not %s: %w", from.Thread, from.CheckSeq, check.ActionID, done.ActionID, ErrServe)
	}
	return done, &check, nil
}

// factAt reads the fact at seq of thread id.
func factAt(ctx context.Context, store thread.Store, id string, seq uint64) (facts.Fact, error) {
	for f, err := range store.Read(ctx, id, seq) {
		if err != nil {
			return facts.Fact{}, fmt.Errorf("read %s seq %d: %w", id, seq, err)
		}
		if f.Seq != seq {
			break
		}
		return f, nil
	}
	return facts.Fact{}, fmt.Errorf("%s seq %d: %w", id, seq, ErrServe)
}

// ArgsDiff says how two calls' arguments differ, key by key when both
// are JSON objects ("path: \"a\" → \"b\""), else as a whole.
func ArgsDiff(a, b string) []string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal([]byte(a), &ma) != nil || json.Unmarshal([]byte(b), &mb) != nil || ma == nil || mb == nil {
		return []string{clip(Canonical(a)) + " → " + clip(Canonical(b))}
	}
	var keys []string
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		va, oka := ma[k]
		vb, okb := mb[k]
		switch {
		case !okb:
			out = append(out, fmt.Sprintf("%s: %s → (none)", k, clip(Canonical(string(va)))))
		case !oka:
			out = append(out, fmt.Sprintf("%s: (none) → %s", k, clip(Canonical(string(vb)))))
		case Canonical(string(va)) != Canonical(string(vb)):
			out = append(out, fmt.Sprintf("%s: %s → %s", k, clip(Canonical(string(va))), clip(Canonical(string(vb)))))
		}
	}
	return out
}

// clip shortens s to at most 80 bytes for a sentence, on a rune boundary.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
