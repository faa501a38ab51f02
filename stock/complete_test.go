package stock_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// A completion reads the store as it is, never making one and never
// waiting on another process's hold: threads by prefix; nothing where
// there is no store, where the store is held, or when the look fails.
func TestComplete(t *testing.T) {
	s, spec := driverSession(t, `{"approve": "all"}`)
	m, err := stock.LoadModel(spec)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	_, _, err = d.Start(ctx, "t1", facts.UserMessage{Text: "Write a.txt"}, "ana", false, nil)
	require.NoError(t, err)
	_, _, err = d.Start(ctx, "u1", facts.UserMessage{Text: "Other"}, "ana", false, nil)
	require.NoError(t, err)
	env := func(string) string { return "" }

	// Held by this session: nothing, at once. The look's open fails on
	// the held store without waiting: with no deadline to end a wait, it
	// returns ErrLocked, never a context's error.
	opened := make(chan error, 1)
	go func() {
		_, err := stock.OpenSession(context.Background(), s.Place, stock.SessionOptions{Getenv: env, Lenient: true, ReadOnly: true})
		opened <- err
	}()
	select {
	case err := <-opened:
		require.ErrorIs(t, err, thread.ErrLocked)
	case <-time.After(30 * time.Second):
		t.Fatal("the open waited for the store to be let go of")
	}
	// Complete itself: a look that waited would be cut at CompletionWait
	// by its timer, so it could not end sooner; one that does not wait
	// ends in a fraction of a millisecond (0.4 ms measured), so the bound
	// holds with room for a loaded machine's thousandfold slow-down.
	start := time.Now()
	threads := func(ctx context.Context, s *stock.Session) ([]drive.Completion, error) {
		return s.ThreadCompletions(ctx, "t")
	}
	require.Empty(t, stock.Complete(ctx, s.Place, env, threads))
	require.Less(t, time.Since(start), stock.CompletionWait)
	require.NoError(t, s.Close())

	cs := stock.Complete(ctx, s.Place, env, threads)
	require.Len(t, cs, 1)
	require.Equal(t, "t1", cs[0].Value)
	require.Contains(t, cs[0].About, "Write a.txt")
	require.Empty(t, stock.Complete(ctx, s.Place, env, func(context.Context, *stock.Session) ([]drive.Completion, error) {
		return []drive.Completion{{Value: "x"}}, errors.New("broken")
	}))
	var gotDeadline bool
	stock.Complete(ctx, s.Place, env, func(ctx context.Context, _ *stock.Session) ([]drive.Completion, error) {
		dl, ok := ctx.Deadline()
		gotDeadline = ok && time.Until(dl) <= stock.CompletionWait
		return nil, nil
	})
	require.True(t, gotDeadline, "the look is bounded")

	// No store: none is made.
	empty := t.TempDir()
	p, err := stock.Locate(empty, "")
	require.NoError(t, err)
	require.Empty(t, stock.Complete(ctx, p, env, threads))
	_, err = os.Stat(p.Store)
	require.ErrorIs(t, err, fs.ErrNotExist, "no store was made")
}
