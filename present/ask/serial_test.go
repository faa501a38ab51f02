package ask_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/present/ask"
)

// Questions are asked only while a run goes on, one at a time; Settle
// ends those being asked and waits for them, and End asks no more.
func TestSerialAsksOneAtATime(t *testing.T) {
	var s ask.Serial
	require.False(t, s.Go(func(context.Context) { t.Error("asked with no run") }))
	s.Begin(context.Background())
	var asking, most, ended atomic.Int32
	for range 3 {
		require.True(t, s.Go(func(ctx context.Context) {
			n := asking.Add(1)
			if n > most.Load() {
				most.Store(n)
			}
			select {
			case <-ctx.Done():
				ended.Add(1)
			case <-time.After(20 * time.Millisecond):
			}
			asking.Add(-1)
		}))
	}
	s.Settle()
	require.EqualValues(t, 1, most.Load(), "one question at a time")
	require.Zero(t, asking.Load(), "Settle waits for the asks")

	block := make(chan struct{})
	require.True(t, s.Go(func(ctx context.Context) {
		<-ctx.Done() // let go of by End
		close(block)
	}))
	s.End()
	<-block
	require.False(t, s.Go(func(context.Context) { t.Error("asked after End") }))

	var none *ask.Serial
	none.Begin(context.Background())
	require.False(t, none.Go(func(context.Context) {}))
	none.Settle()
	none.End()
}
