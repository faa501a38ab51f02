package natsstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// How opening tries again, without a cluster: a request slower than one
// attempt's wait (a slow link) is not given up but joined by another and
// answered; answers with no leader yet are asked again until one has a
// leader; an answer that is an error for good ends it at once; and no
// answer at all ends it after the wait with ErrNoLeader.
func TestUntilLeader(t *testing.T) {
	ctx := context.Background()

	t.Run("slow answer", func(t *testing.T) {
		var calls atomic.Int64
		v, err := natsstore.UntilLeader(ctx, 10*time.Second, func(ctx context.Context) (int, error) {
			if calls.Add(1) > 1 {
				<-ctx.Done() // the others go unanswered
				return 0, ctx.Err()
			}
			select {
			case <-time.After(1500 * time.Millisecond): // three attempts' worth
				return 7, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
		require.NoError(t, err)
		require.Equal(t, 7, v)
		require.GreaterOrEqual(t, calls.Load(), int64(2), "asked again meanwhile")
	})

	t.Run("no leader yet", func(t *testing.T) {
		var calls atomic.Int64
		v, err := natsstore.UntilLeader(ctx, time.Minute, func(ctx context.Context) (int, error) {
			if calls.Add(1) < 5 {
				return 0, natsstore.NoAnswerYet
			}
			return 5, nil
		})
		require.NoError(t, err)
		require.Equal(t, 5, v)
		require.EqualValues(t, 5, calls.Load())
	})

	t.Run("for good", func(t *testing.T) {
		bad := errors.New("stream has layout 9")
		var calls atomic.Int64
		_, err := natsstore.UntilLeader(ctx, time.Minute, func(ctx context.Context) (int, error) {
			calls.Add(1)
			return 0, bad
		})
		require.ErrorIs(t, err, bad)
		require.NotErrorIs(t, err, natsstore.ErrNoLeader)
		require.EqualValues(t, 1, calls.Load())
	})

	t.Run("never", func(t *testing.T) {
		start := time.Now()
		_, err := natsstore.UntilLeader(ctx, time.Second, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		require.ErrorIs(t, err, natsstore.ErrNoLeader)
		require.Contains(t, err.Error(), "none answered")
		require.GreaterOrEqual(t, time.Since(start), time.Second)
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := natsstore.UntilLeader(cctx, time.Minute, func(ctx context.Context) (int, error) {
			return 0, natsstore.NoAnswerYet
		})
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, natsstore.ErrNoLeader)
	})
}
