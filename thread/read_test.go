package thread_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// appendMessages appends n user messages to thread id of s, "m1" to "mN".
func appendMessages(t *testing.T, s thread.Store, id string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("ingress/m%d", i), facts.UserMessage{Text: fmt.Sprintf("m%d", i)})
		require.NoError(t, err)
		_, err = s.Append(context.Background(), id, uint64(i-1), d)
		require.NoError(t, err)
	}
}

// ReadAt reads the fact at a seq, and says plainly when there is none.
func TestReadAt(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	appendMessages(t, s, "t", 1, 3)
	f, err := thread.ReadAt(ctx, s, "t", 2)
	require.NoError(t, err)
	require.Equal(t, uint64(2), f.Seq)
	require.Equal(t, "ingress/m2", f.Cause)

	for _, seq := range []uint64{0, 4, 1 << 40} {
		_, err = thread.ReadAt(ctx, s, "t", seq)
		require.ErrorIs(t, err, thread.ErrNoSeq, "seq %d", seq)
		var se *thread.SeqError
		require.True(t, errors.As(err, &se))
		require.Equal(t, fmt.Sprintf("thread t has no seq %d", seq), err.Error())
	}
	_, err = thread.ReadAt(ctx, s, "nobody", 1)
	require.True(t, errors.Is(err, thread.ErrNoSeq) || errors.Is(err, thread.ErrNotFound), "%v", err)
}

// FirstAfter reads only what was appended after the seq it is given,
// moves it on, and finds the first fact that matches; a thread that did
// not grow is not read.
func TestFirstAfter(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	appendMessages(t, s, "t", 1, 2)
	is := func(text string) func(facts.Fact) bool {
		return func(f facts.Fact) bool {
			m, err := facts.Decode[facts.UserMessage](f)
			return err == nil && m.Text == text
		}
	}
	after := uint64(0)
	f, ok := thread.FirstAfter(ctx, s, "t", &after, is("m2"))
	require.True(t, ok)
	require.Equal(t, uint64(2), f.Seq)
	require.Equal(t, uint64(2), after)

	// m1 is before after: not seen again.
	_, ok = thread.FirstAfter(ctx, s, "t", &after, is("m1"))
	require.False(t, ok)
	require.Equal(t, uint64(2), after)

	appendMessages(t, s, "t", 3, 3) // m3 m4 m5
	f, ok = thread.FirstAfter(ctx, s, "t", &after, is("m4"))
	require.True(t, ok)
	require.Equal(t, uint64(4), f.Seq)
	require.Equal(t, uint64(4), after, "stops at the match")
	_, ok = thread.FirstAfter(ctx, s, "t", &after, is("nothing"))
	require.False(t, ok)
	require.Equal(t, uint64(5), after, "read to the head")

	// A thread that is not there is not an error: looked at again later.
	none := uint64(0)
	_, ok = thread.FirstAfter(ctx, s, "nobody", &none, is("m1"))
	require.False(t, ok)
	require.Zero(t, none)
}
