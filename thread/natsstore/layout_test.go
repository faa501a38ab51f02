package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

func note(t testing.TB, cause string) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: cause})
	require.NoError(t, err)
	return d
}

// notes returns n drafts with causes prefix/0 … prefix/n-1 and a text of
// size bytes each.
func notes(t testing.TB, prefix string, n, size int) []facts.Draft {
	t.Helper()
	ds := make([]facts.Draft, n)
	for i := range ds {
		d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("%s/%d", prefix, i), facts.UserMessage{Text: strings.Repeat("x", size)})
		require.NoError(t, err)
		ds[i] = d
	}
	return ds
}

// rawStream opens the stream name on srv as a plain JetStream client.
func rawStream(t testing.TB, srv *server.Server, name string) (jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(context.Background(), name)
	require.NoError(t, err)
	return js, st
}

// TestLargeAppends: on a server with the default max_payload of 1 MiB, an
// append of one 3 MiB fact and one of 5000 facts (about 2.6 MB) are each
// one record whose facts are in parts on the thread's stage subject; they
// read back from any seq, by a store that has not seen them too, and
// verify.
func TestLargeAppends(t *testing.T) {
	srv := defaultServer(t)
	ctx := context.Background()
	name, opts := freshNamed()
	s := dial(t, srv, opts...)
	big := notes(t, "big", 1, 3<<20)
	h, err := s.Append(ctx, "t", 0, big...)
	require.NoError(t, err)
	many := notes(t, "many", 5000, 500)
	h, err = s.Append(ctx, "t", h.Seq, many...)
	require.NoError(t, err)
	require.EqualValues(t, 5001, h.Seq)
	h, err = s.Append(ctx, "t", h.Seq, note(t, "small"))
	require.NoError(t, err)

	_, st := rawStream(t, srv, name)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
	require.NoError(t, err)
	require.EqualValues(t, 3, info.State.Subjects[natsstore.ThreadSubject(s, "t")], "three appends, three records")
	require.Greater(t, info.State.Subjects[natsstore.StageSubject(s, "t")], uint64(4), "the large ones in parts")

	all := append(append(append([]facts.Draft{}, big...), many...), note(t, "small"))
	for _, reader := range []*natsstore.Store{s, dial(t, srv, opts...)} {
		for _, from := range []uint64{1, 2, 3, 2500, 5001, 5002} {
			n := uint64(0)
			for f, err := range reader.Read(ctx, "t", from) {
				require.NoError(t, err)
				require.Equal(t, from+n, f.Seq)
				require.Equal(t, all[f.Seq-1].Cause, f.Cause)
				require.Equal(t, all[f.Seq-1].Data, f.Data)
				n++
			}
			require.EqualValues(t, 5002-from+1, n, "from %d", from)
		}
		require.NoError(t, reader.Verify(ctx, "t"))
		for _, c := range []string{"big/0", "many/0", "many/4999", "small"} {
			ok, err := reader.HasCause(ctx, "t", c)
			require.NoError(t, err)
			require.True(t, ok, c)
		}
		_, err = reader.Append(ctx, "t", h.Seq, note(t, "many/1234"))
		var dup *thread.DuplicateCauseError
		require.ErrorAs(t, err, &dup)
		require.EqualValues(t, 1236, dup.Seq)
	}
}

// TestForkOfALongThread forks a thread of 10k facts, one append of all of
// them (harness.Fork), on a server with the default max_payload.
func TestForkOfALongThread(t *testing.T) {
	srv := defaultServer(t)
	ctx := context.Background()
	s := dial(t, srv, freshStream()...)
	var h thread.Head
	var err error
	for i := range 20 {
		h, err = s.Append(ctx, "long", h.Seq, notes(t, fmt.Sprintf("part%d", i), 500, 300)...)
		require.NoError(t, err)
	}
	require.EqualValues(t, 10_000, h.Seq)
	f, err := rewind.Fork(ctx, s, "long", 9_999, "long-fork")
	require.NoError(t, err)
	require.EqualValues(t, 10_000, f.Seq, "9999 facts and the fork's own")
	require.NoError(t, s.Verify(ctx, "long-fork"))
	other := dial(t, srv, freshStreamOf(s)...)
	n := 0
	for f, err := range other.Read(ctx, "long-fork", 1) {
		require.NoError(t, err)
		n++
		if n == 10_000 {
			require.Equal(t, facts.KindThreadForked, f.Kind)
		}
	}
	require.Equal(t, 10_000, n)
	heads, err := other.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Len(t, heads, 2)
}

// freshStreamOf returns the options s was opened with, for another store
// on the same stream.
func freshStreamOf(s *natsstore.Store) []natsstore.Option {
	return natsstore.SameStream(s)
}

// TestHalfDoneAppendsAreInvisible: parts published for a large append
// whose record never came (its writer died, or lost the race) are not
// part of the thread, and appends go on.
func TestHalfDoneAppendsAreInvisible(t *testing.T) {
	srv := defaultServer(t)
	ctx := context.Background()
	name, opts := freshNamed()
	a, b := dial(t, srv, opts...), dial(t, srv, opts...)
	h, err := a.Append(ctx, "t", 0, note(t, "first"))
	require.NoError(t, err)

	// A writer that died after its parts: junk on the stage subject.
	js, _ := rawStream(t, srv, name)
	for range 3 {
		_, err := js.Publish(ctx, natsstore.StageSubject(a, "t"), []byte(strings.Repeat("junk", 1000)))
		require.NoError(t, err)
	}
	// Two large appends race at one head: one wins, the other's parts
	// stay unseen.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []*natsstore.Store{a, b} {
		wg.Go(func() {
			_, errs[i] = s.Append(ctx, "t", h.Seq, notes(t, fmt.Sprintf("w%d", i), 3000, 500)...)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			require.ErrorIs(t, err, thread.ErrConflict)
		}
	}
	require.Equal(t, 1, won)
	head, err := b.Head(ctx, "t")
	require.NoError(t, err)
	require.EqualValues(t, 3001, head.Seq)
	require.NoError(t, a.Verify(ctx, "t"))
	_, err = b.Append(ctx, "t", head.Seq, note(t, "after"))
	require.NoError(t, err)
	n := 0
	for _, err := range dial(t, srv, opts...).Read(ctx, "t", 1) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 3002, n)
}

// TestReadFromAnySeqCold reads a thread of appends of one and of several
// facts, interleaved in the stream with another thread's, from every seq,
// with a store that has not read the thread (it finds the record by a
// binary search of the stream) and with one that has.
func TestReadFromAnySeqCold(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	w := dial(t, shared, opts...)
	var want []facts.Fact
	var h, o thread.Head
	var err error
	for i := range 40 {
		ds := notes(t, fmt.Sprintf("a%d", i), 1+i%4, 10)
		h, err = w.Append(ctx, "t", h.Seq, ds...)
		require.NoError(t, err)
		for range i % 3 {
			o, err = w.Append(ctx, "other", o.Seq, note(t, fmt.Sprintf("o%d", o.Seq)))
			require.NoError(t, err)
		}
	}
	for f, err := range w.Read(ctx, "t", 1) {
		require.NoError(t, err)
		want = append(want, f)
	}
	require.EqualValues(t, h.Seq, len(want))
	warm := dial(t, shared, opts...)
	readAll(t, warm, "t")
	for from := uint64(1); from <= h.Seq+1; from++ {
		for _, s := range []*natsstore.Store{dial(t, shared, opts...), warm} {
			var got []facts.Fact
			for f, err := range s.Read(ctx, "t", from) {
				require.NoError(t, err)
				got = append(got, f)
			}
			if from > h.Seq {
				require.Empty(t, got)
				continue
			}
			require.Equal(t, want[from-1:], got, "from %d", from)
		}
	}
}

// TestSmallCache: a store whose cache holds fewer facts than its threads
// still refuses every duplicate and appends at every head.
func TestSmallCache(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	s := dial(t, shared, append(opts, natsstore.WithCache(5))...)
	heads := map[string]uint64{}
	for round := range 6 {
		for _, id := range []string{"a", "b", "c"} {
			h, err := s.Append(ctx, id, heads[id], note(t, fmt.Sprintf("c%d", round)), note(t, fmt.Sprintf("d%d", round)))
			require.NoError(t, err)
			heads[id] = h.Seq
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		for round := range 6 {
			_, err := s.Append(ctx, id, heads[id], note(t, fmt.Sprintf("d%d", round)))
			var dup *thread.DuplicateCauseError
			require.ErrorAs(t, err, &dup)
			require.EqualValues(t, 2*round+2, dup.Seq)
			ok, err := s.HasCause(ctx, id, fmt.Sprintf("c%d", round))
			require.NoError(t, err)
			require.True(t, ok)
		}
		require.NoError(t, s.Verify(ctx, id))
	}
}

// TestStaleViewSeesOthersCauses: a store whose view of a thread is behind
// another store's appends refuses a cause the other appended, at the new
// head and at its own stale one.
func TestStaleViewSeesOthersCauses(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	a, b := dial(t, shared, opts...), dial(t, shared, opts...)
	h, err := a.Append(ctx, "t", 0, note(t, "one"))
	require.NoError(t, err)
	h2, err := b.Append(ctx, "t", h.Seq, note(t, "two"))
	require.NoError(t, err)
	for _, after := range []uint64{h.Seq, h2.Seq} {
		_, err = a.Append(ctx, "t", after, note(t, "two"))
		var dup *thread.DuplicateCauseError
		require.ErrorAs(t, err, &dup, "after %d", after)
		require.EqualValues(t, 2, dup.Seq)
	}
	h3, err := a.Append(ctx, "t", h2.Seq, note(t, "three"))
	require.NoError(t, err)
	require.EqualValues(t, 3, h3.Seq)
}

// TestLostAnswers: an append whose answer from the server is lost tries
// again with the same message id and expected sequence; the server drops
// the retry (or refuses it, as the thread has moved), and the append finds
// its own record and succeeds, once. An append that never hears back
// (every answer lost, until the store's timeout) reads the thread, finds
// its record there and succeeds too.
func TestLostAnswers(t *testing.T) {
	ctx := context.Background()
	opts := append(freshStream(), natsstore.WithTimeout(2*time.Second))
	s := dial(t, shared, opts...)
	h, err := s.Append(ctx, "t", 0, note(t, "one"))
	require.NoError(t, err)
	for i := range 3 {
		natsstore.LoseAnswers(s, int64(i+1))
		h, err = s.Append(ctx, "t", h.Seq, note(t, fmt.Sprintf("lost%d", i)))
		require.NoError(t, err)
		require.EqualValues(t, i+2, h.Seq)
	}
	natsstore.LoseAnswers(s, 1<<30)
	start := time.Now()
	h, err = s.Append(ctx, "t", h.Seq, note(t, "never heard"))
	require.NoError(t, err)
	require.EqualValues(t, 5, h.Seq)
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second, "it waited for the store's timeout")
	natsstore.LoseAnswers(s, 0)
	_, err = s.Append(ctx, "t", 4, note(t, "never heard"))
	require.ErrorIs(t, err, thread.ErrDuplicateCause)
	fs := readAll(t, s, "t")
	require.Len(t, fs, 5)
	require.NoError(t, s.Verify(ctx, "t"))
}

// TestHasCauseUnderAppends: while writers append one draft at a time as
// fast as they can, HasCause on another store finds every cause already
// appended.
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
		ok, err := poller.HasCause(ctx, "t", cause)
		require.NoError(t, err)
		require.True(t, ok, cause)
	}
	require.Equal(t, writers*each, n)
}

// forge publishes a record after id's head by hand, as a buggy writer
// would, expecting the subject's last sequence so it lands right after.
func forge(t *testing.T, s *natsstore.Store, name, id string, rec []byte) {
	t.Helper()
	ctx := context.Background()
	js, st := rawStream(t, shared, name)
	m, err := st.GetLastMsgForSubject(ctx, natsstore.ThreadSubject(s, id))
	require.NoError(t, err)
	_, err = js.PublishMsg(ctx, &nats.Msg{Subject: natsstore.ThreadSubject(s, id), Data: rec, Header: nats.Header{
		jetstream.ExpectedLastSubjSeqHeader: []string{strconv.FormatUint(m.Sequence, 10)},
	}})
	require.NoError(t, err)
}

// TestVerifyFindsForgedRecords: records no store would write, forged after
// a good log, are reported by Verify at the seq where they break it; a
// record that does not decode is reported by Head and Read too.
func TestVerifyFindsForgedRecords(t *testing.T) {
	ctx := context.Background()
	name, opts := freshNamed()
	s := dial(t, shared, opts...)
	at := time.Now().UTC()
	for i, c := range []struct {
		name string
		rec  func(head thread.Head) []byte
		seq  uint64
		want string
	}{
		{"a cause of an earlier append", func(h thread.Head) []byte {
			return record(t, "t1", h, at, note(t, "a"))
		}, 3, "already used"},
		{"a cause of the append before", func(h thread.Head) []byte {
			return record(t, "t2", h, at, note(t, "b"), note(t, "c"))
		}, 3, "already used"},
		{"a broken chain", func(h thread.Head) []byte {
			h.Hash[0] ^= 1
			return record(t, "t3", h, at, note(t, "new"))
		}, 3, "prev is"},
		{"a gap", func(h thread.Head) []byte {
			h.Seq++
			return record(t, "t4", h, at, note(t, "new"))
		}, 4, "starts at seq 4"},
		{"another thread's fact", func(h thread.Head) []byte {
			return record(t, "other", h, at, note(t, "new"))
		}, 3, "names a head"},
	} {
		id := fmt.Sprintf("t%d", i+1)
		h, err := s.Append(ctx, id, 0, note(t, "a"))
		require.NoError(t, err)
		h, err = s.Append(ctx, id, h.Seq, note(t, "b"))
		require.NoError(t, err)
		require.NoError(t, s.Verify(ctx, id))
		forge(t, s, name, id, c.rec(h))
		err = s.Verify(ctx, id)
		var corrupt *thread.CorruptError
		require.ErrorAs(t, err, &corrupt, c.name)
		require.Equal(t, c.seq, corrupt.Seq, "%s: %v", c.name, err)
		require.ErrorContains(t, err, c.want, c.name)
	}

	// Bytes that are no record.
	h, err := s.Append(ctx, "junk", 0, note(t, "a"))
	require.NoError(t, err)
	rec := record(t, "junk", h, at, note(t, "b"))
	rec[len(rec)/2] ^= 0xff
	forge(t, s, name, "junk", rec)
	_, err = s.Head(ctx, "junk")
	require.ErrorIs(t, err, thread.ErrCorrupt)
	require.ErrorContains(t, err, "checksum")
	require.ErrorIs(t, s.Verify(ctx, "junk"), thread.ErrCorrupt)
	var last error
	for _, err := range s.Read(ctx, "junk", 1) {
		last = err
	}
	require.ErrorIs(t, last, thread.ErrCorrupt)
	_, err = s.Append(ctx, "junk", 2, note(t, "c"))
	require.ErrorIs(t, err, thread.ErrCorrupt, "nothing is appended after damage")
}

// record returns the record of drafts appended to id after head at at.
func record(t *testing.T, id string, head thread.Head, at time.Time, ds ...facts.Draft) []byte {
	t.Helper()
	rec, _, err := natsstore.EncodeRecord(id, head, ds, at)
	require.NoError(t, err)
	return rec
}

// TestStalledConsumer: a read whose consumer stops delivering (it runs on a
// replica that lags, say) gets the rest of the records one by one, and
// reads, verifies and catches up as if nothing had happened.
func TestStalledConsumer(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	w := dial(t, shared, opts...)
	var h thread.Head
	var err error
	for i := range 60 {
		h, err = w.Append(ctx, "t", h.Seq, notes(t, fmt.Sprintf("a%d", i), 1+i%2, 10)...)
		require.NoError(t, err)
		_, err = w.Append(ctx, fmt.Sprintf("other%d", i), 0, note(t, "x"))
		require.NoError(t, err)
	}
	want := readAll(t, w, "t")
	r := dial(t, shared, opts...)
	natsstore.StallConsumers(r, 25)
	require.Equal(t, want, readAll(t, r, "t"))
	require.NoError(t, r.Verify(ctx, "t"))
	c := dial(t, shared, opts...)
	natsstore.StallConsumers(c, 7)
	ok, err := c.HasCause(ctx, "t", "a59/1")
	require.NoError(t, err)
	require.True(t, ok)
	_, err = c.Append(ctx, "t", h.Seq, note(t, "a30/0"))
	require.ErrorIs(t, err, thread.ErrDuplicateCause)
}
