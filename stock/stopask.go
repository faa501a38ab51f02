package stock

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// A stop asked of the process that holds a directory store: a run in a
// terminal holds the store (no server serves it), so harness stop cannot
// open it to append stop.requested. It leaves the request instead in the
// store's directory — hidden from every command, as the store is — and
// the holding session (Session.Open starts the watch) takes it within
// stopAskPoll, asking its runtime to stop the thread as Thread.Stop does
// (the running command is cut off, the log records it). The asker waits
// until the store is free, and stops the thread itself if nobody took
// the request.

// stopAskDir is the directory, in the store's, of the stops asked.
const stopAskDir = "stop-asked"

// stopAskPoll is how often a holding session looks for a stop asked.
const stopAskPoll = 100 * time.Millisecond

// StopAsk is a stop asked of the process that holds the store.
type StopAsk struct {
	Thread string `json:"thread"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// stopAskFile is where the stop of thread id is asked.
func (p Place) stopAskFile(id string) string {
	return filepath.Join(p.Store, stopAskDir, hex.EncodeToString([]byte(id))+".json")
}

// AskStop leaves a stop of a.Thread for the process that holds the
// place's store (a directory store; a remote one is shared, and stopped
// through its log).
func (p Place) AskStop(a StopAsk) error {
	if p.Remote != "" {
		return fmt.Errorf("ask a stop of %s: the store is remote; stop through the log", a.Thread)
	}
	if err := thread.ValidateID(a.Thread); err != nil {
		return err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	dir := filepath.Join(p.Store, stopAskDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("ask a stop of %s: %w", a.Thread, err)
	}
	tmp, err := os.CreateTemp(dir, ".ask-*")
	if err != nil {
		return fmt.Errorf("ask a stop of %s: %w", a.Thread, err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	_, werr := tmp.Write(b)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return fmt.Errorf("ask a stop of %s: %w", a.Thread, err)
	}
	if err := os.Rename(tmp.Name(), p.stopAskFile(a.Thread)); err != nil {
		return fmt.Errorf("ask a stop of %s: %w", a.Thread, err)
	}
	return nil
}

// StopAsked reports whether the stop of thread id asked is still there:
// no holder took it.
func (p Place) StopAsked(id string) bool {
	_, err := os.Lstat(p.stopAskFile(id))
	return err == nil
}

// WithdrawStop takes back the stop of thread id asked, if it is still
// there; it reports whether it was.
func (p Place) WithdrawStop(id string) bool {
	return os.Remove(p.stopAskFile(id)) == nil
}

// takeStops takes every stop asked: each file read and removed. A file
// that is not a request (a link, too large, not one) is removed unread.
func (p Place) takeStops() []StopAsk {
	dir := filepath.Join(p.Store, stopAskDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []StopAsk
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(dir, name)
		b, rerr := readAsk(path, e)
		if os.Remove(path) != nil {
			continue // taken meanwhile, or not ours to take
		}
		var a StopAsk
		if rerr != nil || json.Unmarshal(b, &a) != nil || thread.ValidateID(a.Thread) != nil ||
			hex.EncodeToString([]byte(a.Thread))+".json" != name {
			continue
		}
		out = append(out, a)
	}
	return out
}

// readAsk reads a request file: a regular file of at most 64 KiB.
func readAsk(path string, e fs.DirEntry) ([]byte, error) {
	if !e.Type().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := readBounded(path, 64<<10)
	return b, err
}

// watchStops takes the stops asked of the session's store while it is
// open: each is carried out as Thread.Stop does, by a runtime of its own
// on the store, so that a command the session's drive runs is cut off.
// It returns the function that ends the watch (before the store closes).
func (s *Session) watchStops() func() {
	if s.Place.Remote != "" || s.Store == nil {
		return func() {}
	}
	if _, ok := s.Store.(*thread.PebbleStore); !ok {
		return func() {} // through a server, or read-only elsewhere: it takes the stops
	}
	rt, free, err := s.Runtime(WithoutObserver())
	if err != nil {
		return func() {}
	}
	// The place and actor as they are now: Enter moves the session to
	// another workspace (same store) while the watch runs, so the watch
	// reads its own copies, never the session's fields.
	place, actor := s.Place, s.Stock.Actor
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(stopAskPoll)
		defer tick.Stop()
		var stops sync.WaitGroup
		defer stops.Wait()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, a := range place.takeStops() {
				stops.Go(func() { stopAsked(ctx, rt, actor, a) })
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
		free()
	}
}

// stopAsked stops the thread a asks to stop, as harness stop would
// have: by a, for a's reason.
func stopAsked(ctx context.Context, rt *harness.Runtime, actor harness.Actor, a StopAsk) {
	_, _ = rt.Thread(actor, a.Thread).Stop(ctx, a.By, a.Reason)
}

// ErrStopNotTaken: a stop was asked of the process that holds the store,
// and it did not take it (an older harness, or a command that drives no
// thread): the request was withdrawn.
var ErrStopNotTaken = errors.New("the process that holds the store did not take the stop")

// How long StopThroughHolder waits: for the holder to take the request,
// and then for it to let go of the store. A holder that drives threads
// takes a request within stopAskPoll when it runs freely; the take bound
// is wide for a loaded machine (the wait ends as soon as the request is
// taken, so it costs nothing when things are fast), and is what a person
// waits for an answer from a holder that takes no stops.
const (
	stopTakeWait = 10 * time.Second
	stopFreeWait = 30 * time.Second
)

// stopWaits are the bounds of a StopThroughHolder: take for the holder
// to take the request, free for it then to let go of the store.
type stopWaits struct {
	take, free time.Duration
}

// StopThroughHolder asks the process that holds the place's directory
// store to stop thread a.Thread (AskStop), then tries open every
// stopAskPoll until it opens the store: nil then, with the thread stopped
// by the holder (or, when the holder let go without taking the request,
// for the caller to stop itself: the request is withdrawn). A request not
// taken within 10 s while the store stays held is withdrawn, and the
// error wraps ErrStopNotTaken; a request taken by a holder that still
// holds the store 30 s after it was seen taken is an error too. open's errors other than
// thread.ErrLocked are returned as they are.
func (p Place) StopThroughHolder(ctx context.Context, a StopAsk, open func() error) error {
	return p.stopThroughHolder(ctx, a, open, stopWaits{take: stopTakeWait, free: stopFreeWait})
}

// stopThroughHolder is StopThroughHolder with the bounds w.
func (p Place) stopThroughHolder(ctx context.Context, a StopAsk, open func() error, w stopWaits) error {
	if err := p.AskStop(a); err != nil {
		return err
	}
	began := time.Now()
	var taken time.Time // when the request was first seen taken
	for {
		err := open()
		if err == nil || !errors.Is(err, thread.ErrLocked) {
			p.WithdrawStop(a.Thread)
			return err
		}
		if taken.IsZero() && !p.StopAsked(a.Thread) {
			taken = time.Now()
		}
		switch {
		case taken.IsZero() && time.Since(began) > w.take:
			if p.WithdrawStop(a.Thread) {
				return fmt.Errorf("%w (waited %v): %w", ErrStopNotTaken, w.take, err)
			}
			taken = time.Now() // taken meanwhile
		case !taken.IsZero() && time.Since(taken) > w.free:
			return fmt.Errorf("the stop of %s was taken, but the process still holds the store after %v: %w", a.Thread, w.free, err)
		}
		t := time.NewTimer(stopAskPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			p.WithdrawStop(a.Thread)
			return ctx.Err()
		case <-t.C:
		}
	}
}

// OpenOrStop opens the place's store with open; when another process in
// this directory holds it (thread.ErrLocked: a run in a terminal, with no
// server), asking is told, and the holder is asked to stop a.Thread and
// waited for until it lets go (StopThroughHolder). A NATS store, which
// nobody holds so, is only opened.
func (p Place) OpenOrStop(ctx context.Context, a StopAsk, open func() error, asking func()) error {
	err := open()
	if !errors.Is(err, thread.ErrLocked) || p.Remote != "" {
		return err
	}
	if asking != nil {
		asking()
	}
	return p.StopThroughHolder(ctx, a, open)
}
