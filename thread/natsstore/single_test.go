package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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

// TestHasCauseWhileTheThreadMoves: HasCause of the cause of an unsettled
// head, while another store settles that head and appends after it
// between HasCause's two reads, still finds the cause.
func TestHasCauseWhileTheThreadMoves(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	w, other, p := dial(t, shared, opts...), dial(t, shared, opts...), dial(t, shared, opts...)
	_, err := w.Append(ctx, "t", 0, note(t, "a"))
	require.NoError(t, err)
	require.NoError(t, natsstore.AppendFactOnly(ctx, w, "t", note(t, "b")))

	gets := 0
	natsstore.InterceptGets(p, func(_ string, m *jetstream.RawStreamMsg, err error) (*jetstream.RawStreamMsg, error) {
		if gets++; gets == 1 {
			// After HasCause's first read the thread moves on: b is
			// settled, and c follows it.
			_, aerr := other.Append(ctx, "t", 2, note(t, "c"))
			require.NoError(t, aerr)
		}
		return m, err
	})
	ok, err := p.HasCause(ctx, "t", "b")
	require.NoError(t, err)
	require.True(t, ok)
	require.GreaterOrEqual(t, gets, 1)
}

// TestHasCauseUnderAppends: while writers append one draft at a time as
// fast as they can, HasCause finds every cause already appended.
func TestHasCauseUnderAppends(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	const writers, each = 3, 40
	poller := dial(t, shared, opts...)
	var (
		wg       sync.WaitGroup
		appended = make(chan string, writers*each)
	)
	for w := range writers {
		s := dial(t, shared, opts...)
		wg.Go(func() {
			for i := range each {
				cause := fmt.Sprintf("w%d/%d", w, i)
				for {
					h, err := s.Head(ctx, "t")
					if errors.Is(err, thread.ErrNotFound) {
						err = nil
					}
					if err == nil {
						_, err = s.Append(ctx, "t", h.Seq, note(t, cause))
					}
					if err == nil {
						appended <- cause
						break
					}
					if !errors.Is(err, thread.ErrConflict) {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	go func() { wg.Wait(); close(appended) }()
	n := 0
	for cause := range appended {
		n++
		for range 3 {
			ok, err := poller.HasCause(ctx, "t", cause)
			require.NoError(t, err)
			require.True(t, ok, cause)
		}
	}
	require.Equal(t, writers*each, n)
}

// TestSettleMarkerInFlight: with replicas, the server refuses a marker
// whose subject is being written before the marker can be read. The
// append that settles the head then looks again rather than failing.
func TestSettleMarkerInFlight(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	w, other, p := dial(t, shared, opts...), dial(t, shared, opts...), dial(t, shared, opts...)
	_, err := w.Append(ctx, "t", 0, note(t, "a"))
	require.NoError(t, err)
	require.NoError(t, natsstore.AppendFactOnly(ctx, w, "t", note(t, "b")))
	// Another store settles b's marker (and then finds its own append
	// stale).
	_, err = other.Append(ctx, "t", 1, note(t, "x"))
	require.ErrorIs(t, err, thread.ErrConflict)

	// p does not see the marker at first: as if it were being written.
	hidden := 0
	natsstore.InterceptGets(p, func(subject string, m *jetstream.RawStreamMsg, err error) (*jetstream.RawStreamMsg, error) {
		if strings.Contains(subject, ".c.") && hidden < 2 {
			hidden++
			return nil, jetstream.ErrMsgNotFound
		}
		return m, err
	})
	h, err := p.Append(ctx, "t", 2, note(t, "c"))
	require.NoError(t, err)
	require.EqualValues(t, 3, h.Seq)
	require.Equal(t, 2, hidden, "the marker was refused as written, then not found")
	require.NoError(t, p.Verify(ctx, "t"))
}

// forge publishes a fact after id's head by hand, as a buggy writer
// would: with the header of a fact appended alone, or without it, as a
// fact of a batch.
func forge(t *testing.T, s *natsstore.Store, id string, d facts.Draft, alone bool) {
	t.Helper()
	ctx := context.Background()
	h, err := s.Head(ctx, id)
	require.NoError(t, err)
	v, err := facts.Encode(facts.Fact{Thread: id, Seq: h.Seq + 1, Kind: d.Kind, Cause: d.Cause, At: time.Now().UTC(), Data: d.Data, Prev: h.Hash})
	require.NoError(t, err)
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	m := nats.NewMsg(natsstore.FactSubject(s, id, h.Seq+1))
	m.Data = v
	if alone {
		m.Header.Set(natsstore.MarkerHeader, natsstore.MarkerAfter)
	}
	_, err = js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(0))
	require.NoError(t, err)
}

// TestVerifyFindsAReusedCause: a fact whose cause an earlier append
// already used, forged by hand at the head, is reported by Verify, as a
// fact appended alone or as one of a batch; the causes a batch shares
// among its facts are not.
func TestVerifyFindsAReusedCause(t *testing.T) {
	ctx := context.Background()
	s := dial(t, shared, freshStream()...)
	n := 0
	for _, c := range []struct {
		name  string
		log   [][]string // the appends, each its drafts' causes
		cause string     // of the forged fact
		alone bool
		seq   uint64 // reported
	}{
		{"alone, reusing an older cause", [][]string{{"a"}, {"b"}}, "a", true, 3},
		{"alone, reusing the head's cause", [][]string{{"a"}, {"b"}}, "b", true, 3},
		{"in a batch, reusing an older cause", [][]string{{"a"}, {"b", "c"}}, "b", false, 4},
		{"in a batch, reusing the head's cause", [][]string{{"a"}, {"b", "c"}}, "c", false, 4},
		{"in a batch, reusing a cause of a single append", [][]string{{"a"}, {"b"}}, "b", false, 3},
		{"alone, reusing a cause of a batch", [][]string{{"a", "b"}}, "b", true, 3},
		{"none: a batch may share causes", [][]string{{"a", "b", "a"}, {"c"}, {"d", "d"}, {"e", "f", "e", "f"}}, "", false, 0},
	} {
		n++
		id := fmt.Sprintf("t%d", n)
		var after uint64
		for _, causes := range c.log {
			var ds []facts.Draft
			for _, cause := range causes {
				ds = append(ds, note(t, cause))
			}
			h, err := s.Append(ctx, id, after, ds...)
			require.NoError(t, err, c.name)
			after = h.Seq
		}
		require.NoError(t, s.Verify(ctx, id), c.name)
		if c.cause == "" {
			continue
		}
		forge(t, s, id, note(t, c.cause), c.alone)
		err := s.Verify(ctx, id)
		var corrupt *thread.CorruptError
		require.True(t, errors.As(err, &corrupt), "%s: %v", c.name, err)
		require.Equal(t, c.seq, corrupt.Seq, "%s: %v", c.name, err)
		require.ErrorContains(t, err, "already used", c.name)
	}
}
