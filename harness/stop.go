package harness

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/thread"
)

// A stop reaches whoever drives the thread, through the log:
//
//   - Stop of a thread nobody holds holds it and appends thread.stopped:
//     nothing was running, nothing more runs.
//   - Stop of a thread another runtime holds (another process's run, a
//     server, a worker) appends stop.requested instead. From that fact on
//     the thread's view is stopped: nothing new is enabled. The holder
//     looks at the log while each transition runs (watchStop), sees the
//     request and cancels the transition: a command gets SIGTERM, then
//     SIGKILL 500 ms later, and the act is recorded as action.interrupted
//     with what the runtime observed (see Runtime.Resume); a model turn
//     is dropped. Its Resume then appends thread.stopped, stops the
//     children the thread waits on, and ends stopped. Stop waits for that
//     Resume to let go of the thread, and returns its outcome.
//
// So the log of a stop that cut a command off reads action.started,
// stop.requested, action.interrupted, thread.stopped: thread.stopped is
// appended only by a holder, between transitions, and never precedes the
// record of the call that was running. A command that ended on its own
// just before the request was seen is recorded as it ended
// (action.completed after stop.requested): the log says the stop came
// too late for it, and thread.stopped still comes last.

// stopPoll is how often a runtime looks at the thread it runs for a stop
// asked for elsewhere while a transition runs.
const stopPoll = 100 * time.Millisecond

// Stop stops the thread: nothing more runs in it, and the children it
// waits on are stopped and report. By whom and why are recorded
// (thread.stopped); a second stop appends nothing. When another runtime
// runs the thread (in this process or, on a shared store, another), the
// stop is asked of it (stop.requested): it cuts off the transition it
// runs and records the stop, and Stop returns once it has let go of the
// thread. The outcome is that of the Resume Stop runs last.
func (t *Thread) Stop(ctx context.Context, by, reason string) (Outcome, error) {
	if _, err := t.folded(ctx); err != nil {
		return Outcome{Thread: t.id}, err
	}
	held, release, ok, err := tryHold(ctx, t.rt.Store, t.id)
	if err != nil {
		return Outcome{Thread: t.id}, err
	}
	if ok {
		defer release()
		d, err := facts.NewDraft(facts.KindThreadStopped, "", facts.ThreadStopped{By: by, Reason: reason})
		if err != nil {
			return Outcome{Thread: t.id}, err
		}
		if _, err := t.appendIngress(held, d, stopKey); err != nil && !errors.Is(err, fold.ErrRefused) {
			return Outcome{Thread: t.id}, err
		}
		return t.Resume(held)
	}
	d, err := facts.NewDraft(facts.KindStopRequested, "", facts.StopRequested{By: by, Reason: reason})
	if err != nil {
		return Outcome{Thread: t.id}, err
	}
	if _, err := t.appendIngress(ctx, d, stopRequestKey); err != nil && !errors.Is(err, fold.ErrRefused) {
		return Outcome{Thread: t.id}, err
	}
	return t.Resume(ctx)
}

// The ingress keys of a stop and of a stop asked for: each is posted
// once.
const (
	stopKey        = "stop"
	stopRequestKey = "stop-request"
)

// carryOutStop appends thread.stopped for a stop that was asked for
// (stop.requested) and not yet recorded, as the thread's holder, between
// transitions; it reports whether it appended.
func (t *Thread) carryOutStop(ctx context.Context, st *state) (bool, error) {
	l := lineageOf(st.fold)
	if l == nil || l.request == nil || l.stopped != nil || l.ended != nil {
		return false, nil
	}
	d, err := facts.NewDraft(facts.KindThreadStopped, "", facts.ThreadStopped(*l.request))
	if err != nil {
		return false, err
	}
	appended, err := t.appendTo(ctx, st, d, stopKey)
	if errors.Is(err, fold.ErrRefused) {
		return false, nil
	}
	return appended, err
}

// watchStop returns a context derived from ctx that is cancelled, with
// cause ErrStopRequested, once a stop.requested or a thread.stopped is
// appended to the thread after seq after (by anyone), and the function
// that ends the watch and reports whether a stop cancelled the context.
// It looks every stopPoll: no store says when a thread grows.
func (rt *Runtime) watchStop(ctx context.Context, id string, after uint64) (context.Context, func() bool) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTimer(stopPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			if stopAppended(wctx, rt.Store, id, &after) {
				cancel(ErrStopRequested)
				return
			}
			tick.Reset(stopPoll)
		}
	})
	return wctx, func() bool {
		close(done)
		wg.Wait()
		hit := errors.Is(context.Cause(wctx), ErrStopRequested)
		cancel(nil)
		return hit
	}
}

// stopAppended reports whether a stop (asked for or recorded) was
// appended to the thread after *after, and moves *after to the last fact
// it read. A store that cannot be read now is looked at again next time.
func stopAppended(ctx context.Context, store thread.Store, id string, after *uint64) bool {
	_, ok := thread.FirstAfter(ctx, store, id, after, func(f facts.Fact) bool {
		return f.Kind == facts.KindStopRequested || f.Kind == facts.KindThreadStopped
	})
	return ok
}
