package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

func note(t *testing.T, cause string) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: cause})
	require.NoError(t, err)
	return d
}

// A one-draft append publishes its fact, then its cause's marker. A writer
// that died in between leaves the head's cause unmarked: every store still
// counts the cause as used, Verify accepts it, and the next append settles
// it before anything else.
func TestAWriterDiedBeforeItsMarker(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	s := dial(t, shared, opts...)
	h, err := s.Append(ctx, "t", 0, note(t, "ingress/start"))
	require.NoError(t, err)
	require.NoError(t, natsstore.AppendFactOnly(ctx, s, "t", note(t, "step/1")))

	// Another process, with nothing cached.
	other := dial(t, shared, opts...)
	head, err := other.Head(ctx, "t")
	require.NoError(t, err)
	require.EqualValues(t, 2, head.Seq)
	ok, err := other.HasCause(ctx, "t", "step/1")
	require.NoError(t, err)
	require.True(t, ok, "the head's cause is used, marker or not")
	require.NoError(t, other.Verify(ctx, "t"))

	// The cause again: refused, whether the head was expected or stale.
	for _, after := range []uint64{h.Seq, head.Seq} {
		_, err = other.Append(ctx, "t", after, note(t, "step/1"))
		var dup *thread.DuplicateCauseError
		require.True(t, errors.As(err, &dup), "after %d: %v", after, err)
		require.EqualValues(t, 2, dup.Seq)
	}
	// The same in a batch of two.
	_, err = other.Append(ctx, "t", head.Seq, note(t, "step/2"), note(t, "step/1"))
	require.ErrorIs(t, err, thread.ErrDuplicateCause)

	// A new cause goes on, and the log verifies with every marker.
	h, err = other.Append(ctx, "t", head.Seq, note(t, "step/2"))
	require.NoError(t, err)
	require.EqualValues(t, 3, h.Seq)
	require.NoError(t, s.Verify(ctx, "t"))
	_, err = s.Append(ctx, "t", h.Seq, note(t, "step/1"))
	require.ErrorIs(t, err, thread.ErrDuplicateCause)
}

// Writers racing one-draft appends of overlapping causes to one thread,
// some of them dying before their markers: every cause lands once, seqs
// have no gaps, and the log verifies.
func TestOneDraftAppendsRace(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	const writers, causes = 4, 40
	stores := make([]*natsstore.Store, writers)
	for i := range stores {
		stores[i] = dial(t, shared, opts...)
	}
	var wg sync.WaitGroup
	for w, s := range stores {
		wg.Go(func() {
			for c := range causes {
				cause := fmt.Sprintf("step/%d", c)
				for {
					h, err := s.Head(ctx, "race")
					if errors.Is(err, thread.ErrNotFound) {
						h, err = thread.Head{}, nil
					}
					if err != nil {
						t.Errorf("writer %d: head: %v", w, err)
						return
					}
					if c%7 == w { // this writer "dies" before the marker
						err = natsstore.AppendFactOnly(ctx, s, "race", note(t, cause))
					} else {
						_, err = s.Append(ctx, "race", h.Seq, note(t, cause))
					}
					if err == nil || errors.Is(err, thread.ErrDuplicateCause) {
						break
					}
					if !errors.Is(err, thread.ErrConflict) && !strings.Contains(err.Error(), "wrong last sequence") {
						t.Errorf("writer %d, %s: %v", w, cause, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	var n uint64
	for f, err := range stores[0].Read(ctx, "race", 1) {
		require.NoError(t, err)
		n++
		require.Equal(t, n, f.Seq)
		seen[f.Cause]++
	}
	require.Len(t, seen, causes)
	for c, k := range seen {
		require.Equal(t, 1, k, c)
	}
	require.NoError(t, stores[1].Verify(ctx, "race"))
}
