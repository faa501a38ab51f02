package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// The bounds of log --follow's poll of the thread's head: no store says
// when a thread grows, so follow looks, often while facts come and less
// often while none do.
const (
	followPollMin = 100 * time.Millisecond
	followPollMax = time.Second
	// followSettle is how long a thread stays parked (or failed, with a
	// model turn to try again) before follow takes it as its end: the
	// process that drives it answers by policy, or retries, at once.
	followSettle = 2 * time.Second
)

// follower prints the facts of a thread as they are appended, until the
// thread ends (done, parked, failed, stopped).
//
// A store held by a server, or on NATS, is read while other processes
// append to it, and stays open. A store in a directory that this process
// opened itself is locked while it is open: the process that drives the
// thread could not open it. So follow opens such a store only to read
// what changed (when the files of its database did), and closes it again
// at once; while another process holds it, follow waits.
type follower struct {
	a  *app
	s  *session
	id string
	// next is the seq of the next fact to print.
	next uint64
	// print prints one fact.
	print func(facts.Fact) error
	// stamp is what the database's files looked like when follow last
	// read a store it does not hold ("" when it holds the store).
	stamp string
	// looked is set once the thread's state was read.
	looked bool
	// rt reads the thread's state, on the store open now (nil: none yet).
	rt *harness.Runtime
	// text is the text of the last model turn printed, for the stream's
	// result line.
	text string
}

// streamFact writes a fact as a line of the stream.
func (f *follower) streamFact(fact facts.Fact) error {
	if fact.Kind == facts.KindModelTurn {
		f.text = drive.LastText([]facts.Fact{fact})
	}
	return f.a.streamFact(fact)
}

// follow prints the thread's facts from f.next on, as log does, and then
// the facts appended after them, until the thread ends; it returns what
// run returns for how it ended. A done ctx (Ctrl-C) leaves it.
func (f *follower) follow(ctx context.Context) error {
	_, direct := f.s.Store.(*thread.PebbleStore)
	if direct {
		f.stamp = dbStamp(f.s.Place.DB())
	}
	open, wait := true, followPollMin
	var pending *drive.State // parked, or failed to be retried: an end if it stays so
	for {
		if open {
			st, grew, err := f.look(ctx)
			if err != nil {
				return err
			}
			if st != nil {
				switch {
				case st.Status == harness.StatusResumable:
					pending = nil
				case st.Status == harness.StatusParked || st.Status == harness.StatusFailed && st.Retry != "":
					// Perhaps for a moment only: the process driving
					// the thread may answer by its policy, or try a
					// failed model turn again. An end once it stays so.
					pending = st
				default:
					return f.end(*st)
				}
			}
			if direct {
				// Let go of it: the process that drives the thread needs it.
				f.rt = nil
				err := f.s.Release()
				if err != nil {
					return err
				}
				open = false
			}
			if grew {
				wait = followPollMin
			}
		}
		// (A store in a directory that changed since follow read it is
		// being written, by the process that holds it now: no end yet.)
		if pending != nil && time.Since(pending.Head.At) >= followSettle && (!direct || dbStamp(f.s.Place.DB()) == f.stamp) {
			return f.end(*pending)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, followPollMax)
		if direct {
			var err error
			if open, err = f.reopen(ctx); err != nil {
				return err
			}
		}
	}
}

// look prints the facts appended since the last look and reads the
// thread's state when there were some (or on the first look); st is nil
// when nothing was appended.
func (f *follower) look(ctx context.Context) (st *drive.State, grew bool, err error) {
	first := f.next
	for fact, err := range f.s.Store.Read(ctx, f.id, f.next) {
		if err != nil {
			return nil, false, err
		}
		if fact.Seq < f.next {
			continue
		}
		if err := f.print(fact); err != nil {
			return nil, false, err
		}
		f.next = fact.Seq + 1
	}
	grew = f.next != first
	if !grew && f.looked {
		return nil, false, nil
	}
	f.looked = true
	if f.rt == nil {
		// One runtime for as long as the store is open.
		if f.rt, err = f.s.runtime(); err != nil {
			return nil, grew, err
		}
	}
	th, err := f.rt.Open(ctx, f.s.Stock.Actor, f.id)
	if err != nil {
		return nil, grew, err
	}
	state, err := drive.Inspect(ctx, th)
	if err != nil {
		return nil, grew, err
	}
	return &state, grew, nil
}

// reopen opens the store again, when its database's files changed since
// the last look; ok false when they did not, or another process holds
// the store (it is appending: look again later).
func (f *follower) reopen(ctx context.Context) (ok bool, err error) {
	stamp := dbStamp(f.s.Place.DB())
	if stamp == f.stamp {
		return false, nil
	}
	err = f.s.Reopen(ctx, 0)
	if errors.Is(err, thread.ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f.stamp = stamp
	return true, nil
}

// dbStamp says what the files of the database in dir look like: their
// names, sizes and times, but for the lock file, which every open touches.
// A read-only open writes nothing else, so the stamp changes only when a
// writer wrote.
func dbStamp(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	var stamp []byte
	for _, e := range entries {
		if e.Name() == "LOCK" {
			continue // every open touches it, a read-only one too
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile: the next stamp differs anyway
		}
		stamp = fmt.Appendf(stamp, "%s %d %d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	return string(stamp)
}

// end says how the thread ended, as run does, and returns run's result
// for it.
func (f *follower) end(st drive.State) error {
	switch {
	case f.a.streamOut():
		if err := f.a.streamResult(drive.ResultOf(st, statusExit(st.Status), f.text)); err != nil {
			return err
		}
	case f.a.textOut():
		f.a.printState(st, f.s.Place.Root)
	}
	switch st.Status {
	case harness.StatusDone:
		return nil
	case harness.StatusParked:
		f.a.code = exitParked
		return nil
	}
	return &exitErr{code: exitError} // said above, or in the facts
}
