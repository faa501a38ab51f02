package stock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread"
)

// heldStore is a directory store's place held by a holder of the test's
// making: open fails with thread.ErrLocked while it holds the store, and
// take runs the holder's side (takeStops) as a holding session's watch
// does.
type heldStore struct {
	p    Place
	held atomic.Bool
}

func newHeldStore(t *testing.T) *heldStore {
	h := &heldStore{p: Place{Store: t.TempDir()}}
	h.held.Store(true)
	return h
}

// open is the stopper's open of the store.
func (h *heldStore) open() error {
	if h.held.Load() {
		return fmt.Errorf("open the store: %w", thread.ErrLocked)
	}
	return nil
}

// holdUntilTaken is a holder that begins to look for stops after delay,
// takes the stop of id when it finds it, and then, if letGo, lets go of
// the store. It returns once it has taken it, or ctx ended.
func (h *heldStore) holdUntilTaken(ctx context.Context, id string, delay time.Duration, letGo bool) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	for {
		for _, a := range h.p.takeStops() {
			if a.Thread == id {
				if letGo {
					h.held.Store(false)
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(stopAskPoll):
		}
	}
}

// goHold runs holdUntilTaken in the background for the test's life.
func (h *heldStore) goHold(t *testing.T, id string, delay time.Duration, letGo bool) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { h.holdUntilTaken(ctx, id, delay, letGo) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// TestStopThroughASlowHolder: a holder that takes the stop only after a
// few seconds — a loaded machine, where the run's watch runs late — has
// it taken, and the stop goes on once the holder lets go. (With the take
// bound of 2 s it was withdrawn as not taken, and harness stop failed.)
func TestStopThroughASlowHolder(t *testing.T) {
	h := newHeldStore(t)
	h.goHold(t, "t1", 2500*time.Millisecond, true)
	err := h.p.StopThroughHolder(context.Background(), StopAsk{Thread: "t1", By: "me"}, h.open)
	require.NoError(t, err)
	require.False(t, h.p.StopAsked("t1"))
}

// TestStopNotTaken: while nobody takes the request (an older harness
// holds the store) and the store stays held, the request is withdrawn
// once the take bound has run, and the error says it was not taken.
func TestStopNotTaken(t *testing.T) {
	h := newHeldStore(t)
	err := h.p.stopThroughHolder(context.Background(), StopAsk{Thread: "t1"}, h.open,
		stopWaits{take: 200 * time.Millisecond, free: time.Hour})
	require.ErrorIs(t, err, ErrStopNotTaken)
	require.ErrorIs(t, err, thread.ErrLocked)
	require.False(t, h.p.StopAsked("t1"), "the request is withdrawn")
}

// TestStopTakenButStillHeld: a holder that takes the request and keeps
// the store is not said to have not taken it: the stop waits the free
// bound, then says the store is still held.
func TestStopTakenButStillHeld(t *testing.T) {
	h := newHeldStore(t)
	h.goHold(t, "t1", 0, false)
	err := h.p.stopThroughHolder(context.Background(), StopAsk{Thread: "t1"}, h.open,
		stopWaits{take: time.Hour, free: 200 * time.Millisecond})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrStopNotTaken)
	require.ErrorIs(t, err, thread.ErrLocked)
	require.ErrorContains(t, err, "was taken, but the process still holds the store")
}

// TestStopThroughHolderEnds: an open that fails otherwise than locked,
// and a cancelled context, end the wait, and the request is withdrawn.
func TestStopThroughHolderEnds(t *testing.T) {
	p := Place{Store: t.TempDir()}
	broken := errors.New("broken store")
	err := p.StopThroughHolder(context.Background(), StopAsk{Thread: "t1"}, func() error { return broken })
	require.ErrorIs(t, err, broken)
	require.False(t, p.StopAsked("t1"))

	h := newHeldStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	opens := 0
	err = h.p.StopThroughHolder(ctx, StopAsk{Thread: "t1"}, func() error {
		if opens++; opens == 2 {
			cancel()
		}
		return h.open()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, h.p.StopAsked("t1"))
}
