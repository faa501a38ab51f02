package drive

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// The log is the source of truth for a prompt: while a person is asked a
// request at a terminal, the request may be answered elsewhere — on the
// page, through the API, from another terminal — or the thread stopped.
// WatchAnswer watches the thread for that, so that the prompt stops
// asking, says what was answered by whom, and goes on from the log: a
// person never answers a request that is no longer open without seeing
// that it was answered.

// answerPoll is how often a watch looks at the thread.
const answerPoll = 200 * time.Millisecond

// Elsewhere is what ended a person's wait: an answer to the request
// given elsewhere, or a stop of the thread. It is the cause of the
// context WatchAnswer returns once it has seen it.
type Elsewhere struct {
	// Thread is the thread the request is in, and Request its ref.
	Thread, Request string
	// Fact is the answer, or the thread.stopped or stop.requested that
	// stopped the thread.
	Fact facts.Fact
	// Said says it in a few words: "1-call_1 approved by bob", "stopped
	// by bob: not now". It holds what people typed (a reason, a name):
	// escape it for a terminal.
	Said string
}

func (e *Elsewhere) Error() string { return "answered elsewhere: " + e.Said }

// Peek reads the thread's store for a watch while the front end has let
// go of it (a command that closes a store in a directory while a person
// thinks, so that other processes can use it): it calls look with the
// store open, or returns nil without calling it when the store cannot
// have changed since it last did, or cannot be opened now (look again
// later). Nil reads the thread's own store, which stays open.
type Peek func(ctx context.Context, look func(thread.Store) error) error

// WatchAnswer watches the thread th for an answer to p given elsewhere,
// and for a stop of the thread (of p's thread, when p is a child's), for
// as long as a person is asked p: the context it returns is cancelled,
// with cause *Elsewhere, once the log has one. The store must be open
// when it is called: it first brings th up to date, and an answer
// already given is seen at once. Then it reads only the facts appended
// after, every 200 ms, through peek (nil: th's store). done ends the
// watch and returns what ended the wait, or nil; call it before posting
// the person's answer (an answer that lands in between is one PostAnswer
// reports: ErrAnswerDiffers, or a duplicate).
func WatchAnswer(ctx context.Context, th *harness.Thread, p Pending, peek Peek) (watched context.Context, done func() *Elsewhere, err error) {
	to, err := Target(ctx, th, p)
	if err != nil {
		return nil, nil, err
	}
	ref := Ref(p)
	kind := AnswerKind(p.Kind)
	v, err := to.View(ctx)
	if err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithCancelCause(ctx)
	var (
		mu   sync.Mutex // guards seen
		seen *Elsewhere
	)
	end := func(e *Elsewhere) {
		mu.Lock()
		seen = e
		mu.Unlock()
		cancel(e)
	}
	if e, err := already(ctx, to, v, p, ref, kind); err != nil {
		cancel(nil)
		return nil, nil, err
	} else if e != nil {
		end(e)
		return wctx, func() *Elsewhere { return e }, nil
	}
	if peek == nil {
		store := to.Store()
		peek = func(_ context.Context, look func(thread.Store) error) error { return look(store) }
	}
	after := v.Head.Seq
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTimer(answerPoll)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			var found *Elsewhere
			_ = peek(wctx, func(s thread.Store) error {
				found = answerAfter(wctx, s, to.ID(), &after, p.RequestID, ref, kind)
				return nil
			})
			if found != nil {
				end(found)
				return
			}
			tick.Reset(answerPoll)
		}
	})
	return wctx, func() *Elsewhere {
		close(stop)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if seen == nil {
			cancel(nil)
		}
		return seen
	}, nil
}

// already is what ended the wait for p before the watch began: its
// answer (in the thread's reading), or a stop; nil while p is open.
func already(ctx context.Context, to *harness.Thread, v harness.View, p Pending, ref string, kind facts.Kind) (*Elsewhere, error) {
	if v.Status == harness.StatusStopped {
		e := &Elsewhere{Thread: to.ID(), Request: ref, Said: v.Reason}
		if s := v.Lineage.Stopped; s != nil {
			e.Fact, _ = thread.ReadAt(ctx, to.Store(), to.ID(), v.Lineage.StoppedSeq)
		} else if v.Lineage.Requested != nil {
			e.Fact, _ = thread.ReadAt(ctx, to.Store(), to.ID(), v.Lineage.RequestedSeq)
		}
		return e, nil
	}
	for _, w := range v.Waits {
		if w.RequestID == p.RequestID && w.Kind == p.Kind {
			return nil, nil
		}
	}
	r, err := to.Reading(ctx)
	if err != nil {
		return nil, err
	}
	seq, _, said, ok := answerTo(r, kind, p.RequestID)
	if !ok {
		// Not open, and no answer: the call was completed without one
		// (its turn was stopped). The thread moved: look again.
		return &Elsewhere{Thread: to.ID(), Request: ref, Said: fmt.Sprintf("%s is no longer open", ref)}, nil
	}
	f, err := thread.ReadAt(ctx, to.Store(), to.ID(), seq)
	if err != nil {
		return nil, err
	}
	return &Elsewhere{Thread: to.ID(), Request: ref, Fact: f, Said: said}, nil
}

// answerAfter reads the facts of thread id after *after (moving it on)
// and returns the first that answers request (of kind) or stops the
// thread; nil when none does, or the store cannot be read now.
func answerAfter(ctx context.Context, s thread.Store, id string, after *uint64, request, ref string, kind facts.Kind) *Elsewhere {
	var said string
	f, ok := thread.FirstAfter(ctx, s, id, after, func(f facts.Fact) bool {
		switch {
		case kind == facts.KindPlanModeSet && (f.Kind == facts.KindPlanModeSet || f.Kind == facts.KindUserMessage):
			// A plan waits no more once it is acted on, plan mode is
			// switched off, or a message asks for another.
			said = sayPlanAnswer(ref, f)
			return true
		case f.Kind == kind && AnsweredRequest(f) == request:
			said = sayAnswer(f.Kind, f.Data)
			return true
		case f.Kind == facts.KindThreadStopped:
			p, err := facts.Decode[facts.ThreadStopped](f)
			said = sayStop(p.By, p.Reason)
			return err == nil
		case f.Kind == facts.KindStopRequested:
			p, err := facts.Decode[facts.StopRequested](f)
			said = sayStop(p.By, p.Reason)
			return err == nil
		}
		return false
	})
	if !ok {
		return nil
	}
	return &Elsewhere{Thread: id, Request: ref, Fact: f, Said: said}
}

// sayPlan says what a plan.mode.set did to a plan waited on.
func sayPlan(p facts.PlanModeSet) string {
	s := "plan mode switched off"
	switch {
	case p.Acts > 0:
		s = fmt.Sprintf("the plan of turn %d acted on", p.Acts)
	case p.On:
		s = "plan mode switched on"
	}
	if p.By != "" {
		s += " by " + p.By
	}
	return s
}

func sayStop(by, reason string) string {
	s := "stopped"
	if by != "" {
		s += " by " + by
	}
	if reason != "" {
		s += ": " + reason
	}
	return s
}

// IsElsewhere reports whether err says a wait ended elsewhere, and what
// ended it.
func IsElsewhere(err error) (*Elsewhere, bool) {
	var e *Elsewhere
	ok := errors.As(err, &e)
	return e, ok
}

// sayPlanAnswer says what ended the wait on the plan ref: f, a
// plan.mode_set or a user.message.
func sayPlanAnswer(ref string, f facts.Fact) string {
	if f.Kind == facts.KindUserMessage {
		m, _ := facts.Decode[facts.UserMessage](f)
		return fmt.Sprintf("%s: another plan was asked for: %q", ref, firstWords(m.Text, 80))
	}
	m, _ := facts.Decode[facts.PlanModeSet](f)
	s := ref + ": plan mode switched "
	switch {
	case m.Acts > 0:
		s = fmt.Sprintf("%s: the plan of turn %d acted on", ref, m.Acts)
	case m.On:
		s += "on"
	default:
		s += "off"
	}
	if m.By != "" {
		s += " by " + m.By
	}
	return s
}

// firstWords is s cut to at most n bytes, on a rune boundary, with "…"
// when cut.
func firstWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
