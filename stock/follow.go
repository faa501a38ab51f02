package stock

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

// The bounds of Follow's poll of the thread's head: no store says when a
// thread grows, so Follow looks, often while facts come and less often
// while none do.
const (
	followPollMin = 100 * time.Millisecond
	followPollMax = time.Second
	// FollowSettle is how long a thread stays parked (or failed, with a
	// model turn to try again) before Follow takes it as its end: the
	// process that drives it answers by policy, or retries, at once.
	FollowSettle = 2 * time.Second
)

// Follow calls each with the facts of thread id from seq from on, and
// then with the facts appended after them by whatever process drives the
// thread, until the thread ends: done, failed or stopped, or parked (or
// failed with a model turn to try again) for FollowSettle. It returns
// how the thread stands then. A done ctx leaves it with ctx's error; an
// error of each ends it with that error.
//
// A store held by a server, or on NATS, is read while other processes
// append to it, and stays open. A store in a directory that this session
// opened itself is locked while it is open: the process that drives the
// thread could not open it. So Follow opens such a store only to read
// what changed (when the files of its database did), and releases it
// again at once (Release, Reopen); while another process holds it,
// Follow waits. The session is left released then.
func (s *Session) Follow(ctx context.Context, id string, from uint64, each func(facts.Fact) error) (drive.State, error) {
	f := &follower{s: s, id: id, next: max(from, 1), each: each}
	return f.follow(ctx)
}

// follower is one Follow.
type follower struct {
	s  *Session
	id string
	// next is the seq of the next fact to give each.
	next uint64
	each func(facts.Fact) error
	// stamp is what the database's files looked like when follow last
	// read a store it does not hold ("" when it holds the store).
	stamp string
	// looked is set once the thread's state was read.
	looked bool
	// rt reads the thread's state, on the store open now (nil: none yet).
	rt *harness.Runtime
}

func (f *follower) follow(ctx context.Context) (drive.State, error) {
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
				return drive.State{}, err
			}
			if st != nil {
				switch {
				case st.Status == harness.StatusResumable || st.Status == drive.StatusRunning:
					pending = nil
				case st.Status == harness.StatusParked || st.Status == harness.StatusFailed && st.Retry != "":
					// Perhaps for a moment only: the process driving
					// the thread may answer by its policy, or try a
					// failed model turn again. An end once it stays so.
					pending = st
				default:
					return *st, nil
				}
			}
			if direct {
				// Let go of it: the process that drives the thread needs it.
				f.rt = nil
				if err := f.s.Release(); err != nil {
					return drive.State{}, err
				}
				open = false
			}
			if grew {
				wait = followPollMin
			}
		}
		// (A store in a directory that changed since follow read it is
		// being written, by the process that holds it now: no end yet.)
		if pending != nil && time.Since(pending.Head.At) >= FollowSettle && (!direct || dbStamp(f.s.Place.DB()) == f.stamp) {
			return *pending, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return drive.State{}, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, followPollMax)
		if direct {
			var err error
			if open, err = f.reopen(ctx); err != nil {
				return drive.State{}, err
			}
		}
	}
}

// look gives each the facts appended since the last look and reads the
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
		if err := f.each(fact); err != nil {
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
		if f.rt, _, err = f.s.Runtime(); err != nil {
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

// Peeker reads the session's store for a watch of a thread while the
// front end has let go of it (a prompt that Released the store while a
// person thinks) (see drive.Peek). A store in a directory is opened, read
// only, only when its database's files changed since the last look
// (someone wrote; before the first, since the prompt let go: what came
// before, the watch read while the prompt held the store — call Peeker
// before letting go), and closed at once:
// the process that answers needs it; while another process holds it, the
// watch looks again later. A store others share (a server's, NATS) is
// opened at the first look and kept until done is called.
func (s *Session) Peeker() (peek drive.Peek, done func()) {
	_, direct := s.Store.(*thread.PebbleStore)
	var (
		stamp string
		kept  thread.Store
	)
	if direct {
		stamp = dbStamp(s.Place.DB())
	}
	peek = func(ctx context.Context, look func(thread.Store) error) error {
		if kept != nil {
			return look(kept)
		}
		if direct {
			now := dbStamp(s.Place.DB())
			if now == stamp {
				return nil
			}
			st, err := s.Place.OpenStoreReadOnly(ctx, 0)
			if err != nil {
				return nil // held by another process: it is writing; later
			}
			defer st.Close()
			stamp = now
			return look(st)
		}
		st, err := s.Place.OpenStoreReadOnly(ctx, 0)
		if err != nil {
			return nil
		}
		kept = st
		return look(st)
	}
	return peek, func() {
		if kept != nil {
			kept.Close()
		}
	}
}
