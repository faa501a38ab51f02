package thread_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// msg is a user message draft under the ingress key key.
func msg(t *testing.T, key string) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(key), facts.UserMessage{Text: key})
	require.NoError(t, err)
	return d
}

// seen collects what a Tail reports.
type seen struct {
	mu   sync.Mutex // guards what follows
	seqs map[string][]uint64
	errs []error
}

func (s *seen) fn(f facts.Fact, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs = append(s.errs, err)
		return
	}
	if s.seqs == nil {
		s.seqs = map[string][]uint64{}
	}
	s.seqs[f.Thread] = append(s.seqs[f.Thread], f.Seq)
}

func seqsUpTo(from, to uint64) []uint64 {
	var s []uint64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// TestTailShowsOthersAppends: a Tail reports what its watched store
// appends and what another writer of the same store appended in between,
// each once, in seq order; Poll reports what came since without an
// append; the facts there before the first watched append are not
// reported; a thread nobody appended to through it is not followed.
func TestTailShowsOthersAppends(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer store.Close()

	// Two facts before the front end came.
	h, err := store.Append(ctx, "t1", 0, msg(t, "a"), msg(t, "b"))
	require.NoError(t, err)
	_, err = store.Append(ctx, "other", 0, msg(t, "o"))
	require.NoError(t, err)

	var s seen
	tail := thread.NewTail(s.fn)
	w := tail.Watch(store)
	require.NoError(t, tail.Poll(ctx))
	require.Empty(t, s.seqs, "nothing is followed before an append")

	h, err = w.Append(ctx, "t1", h.Seq, msg(t, "c")) // seq 3
	require.NoError(t, err)
	h, err = store.Append(ctx, "t1", h.Seq, msg(t, "d"), msg(t, "e")) // 4, 5: elsewhere
	require.NoError(t, err)
	h, err = w.Append(ctx, "t1", h.Seq, msg(t, "f")) // 6
	require.NoError(t, err)
	require.Equal(t, []uint64{3, 4, 5, 6}, s.seqs["t1"])

	h, err = store.Append(ctx, "t1", h.Seq, msg(t, "g")) // 7: elsewhere, while waiting
	require.NoError(t, err)
	require.NoError(t, tail.Poll(ctx))
	require.NoError(t, tail.Poll(ctx))
	require.Equal(t, seqsUpTo(3, 7), s.seqs["t1"], "a poll reports each fact once")

	// A watched append after a poll reported more than it: nothing twice.
	_, err = w.Append(ctx, "t1", h.Seq, msg(t, "h")) // 8
	require.NoError(t, err)
	require.Equal(t, seqsUpTo(3, 8), s.seqs["t1"])
	require.Empty(t, s.seqs["other"])
	require.Empty(t, s.errs)

	// Follow starts a thread where the front end came to it.
	tail.Follow("other", 0)
	require.NoError(t, tail.Poll(ctx))
	require.Equal(t, []uint64{1}, s.seqs["other"])

	// A closed store: a poll reports nothing, and no error.
	require.NoError(t, store.Close())
	require.NoError(t, tail.Poll(ctx))
}

// TestTailConcurrent: appends through the Tail from several goroutines
// and another writer meanwhile, with polls: every fact of each thread
// reported once, in order (run under -race too).
func TestTailConcurrent(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer store.Close()
	var s seen
	tail := thread.NewTail(s.fn)
	w := tail.Watch(store)
	const n = 40
	var wg sync.WaitGroup
	appendAll := func(st thread.Store, id, who string) {
		defer wg.Done()
		for i := 0; i < n; i++ {
			for {
				h, err := st.Head(ctx, id)
				after := h.Seq
				if err != nil {
					after = 0
				}
				if _, err = st.Append(ctx, id, after, msg(t, fmt.Sprintf("%s-%d", who, i))); err == nil {
					break
				}
			}
		}
	}
	for _, id := range []string{"x", "y"} {
		wg.Add(2)
		go appendAll(w, id, "here")
		go appendAll(store, id, "there")
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				tail.Poll(ctx)
			}
		}
	}()
	wg.Wait()
	close(done)
	require.NoError(t, tail.Poll(ctx))
	require.Empty(t, s.errs)
	for _, id := range []string{"x", "y"} {
		got := s.seqs[id]
		require.NotEmpty(t, got)
		first := got[0]
		require.Equal(t, seqsUpTo(first, 2*n), got, "thread %s", id)
	}
}

// BenchmarkTailAppend is an append read back through a Tail (what a
// front end's runtime does now) against thread.Watch (what it did: only
// its own appends reported), interleaved in blocks on one Pebble store in
// the same run; ratio = Tail's time per append / Watch's. A Poll between
// blocks, as the front end's ticker does, is counted in the Tail's time.
func BenchmarkTailAppend(b *testing.B) {
	ctx := context.Background()
	store, err := thread.OpenPebble(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { store.Close() })
	count := 0
	fn := func(facts.Fact, error) { count++ }
	watched := thread.Watch(store, fn)
	tail := thread.NewTail(fn)
	tailed := tail.Watch(store)
	const block = 64
	var heads [2]uint64
	var took [2]time.Duration
	i := 0
	for b.Loop() {
		which := (i / block) % 2
		st, id := watched, "watch"
		if which == 1 {
			st, id = tailed, "tail"
		}
		draft, err := facts.NewDraft(facts.KindModelTurn, fmt.Sprintf("infer/turn/%d", i), facts.ModelTurn{Turn: i + 1, Text: "Reading auth.go."})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		h, err := st.Append(ctx, id, heads[which], draft)
		if err != nil {
			b.Fatal(err)
		}
		if which == 1 && i%block == block-1 {
			if err := tail.Poll(ctx); err != nil {
				b.Fatal(err)
			}
		}
		took[which] += time.Since(start)
		heads[which] = h.Seq
		i++
	}
	if count < i {
		b.Fatalf("%d facts reported of %d appended", count, i)
	}
	if took[0] > 0 {
		b.ReportMetric(float64(took[1])/float64(took[0]), "ratio")
	}
}
