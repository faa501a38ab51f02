package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Opener opens the store under test.
type Opener struct {
	// Open returns a new, empty store. The suite closes it (ignoring
	// thread.ErrClosed) when the test ends.
	Open func(t *testing.T) thread.Store
	// Reopen closes s, which Open returned, and returns a new store over
	// the same data, as a restarted process would see it.
	Reopen func(t *testing.T, s thread.Store) thread.Store
}

// Run runs the conformance suite against the stores o opens, each subtest on
// a store of its own.
func Run(t *testing.T, o Opener) {
	require.NotNil(t, o.Open, "Opener.Open")
	require.NotNil(t, o.Reopen, "Opener.Reopen")
	open := func(t *testing.T) thread.Store {
		s := o.Open(t)
		t.Cleanup(func() { closeStore(t, s) })
		return s
	}
	for _, tc := range []struct {
		name string
		test func(*testing.T, thread.Store)
	}{
		{"AppendAndRead", testAppendAndRead},
		{"AppendIsAllOrNone", testAppendIsAllOrNone},
		{"ReadFromAnySeq", testReadFromAnySeq},
		{"ReadStopsWhenAsked", testReadStopsWhenAsked},
		{"ReadSeesOneSnapshot", testReadSeesOneSnapshot},
		{"Scan", testScan},
		{"ConflictCarriesTheHead", testConflict},
		{"ConcurrentAppendersOneWinnerPerRound", testOneWinnerPerRound},
		{"ConcurrentAppendersLoseNothing", testConcurrentAppendersLoseNothing},
		{"DuplicateCause", testDuplicateCause},
		{"CausesWithinOneAppend", testCausesWithinOneAppend},
		{"CreateOnce", testCreateOnce},
		{"CausesBelongToTheirThread", testCausesBelongToTheirThread},
		{"Verify", testVerify},
		{"UnknownThread", testUnknownThread},
		{"Threads", testThreads},
		{"LargePayload", testLargePayload},
		{"LongAppend", testLongAppend},
		{"EmptyAppend", testEmptyAppend},
		{"BadThreadIDs", testBadThreadIDs},
		{"InvalidDrafts", testInvalidDrafts},
		{"CancelledContext", testCancelledContext},
		{"Closed", testClosed},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
	t.Run("PersistsAcrossReopen", func(t *testing.T) {
		s := o.Open(t)
		testPersistence(t, s, func(s thread.Store) thread.Store {
			r := o.Reopen(t, s)
			t.Cleanup(func() { closeStore(t, r) })
			return r
		})
	})
}

func closeStore(t *testing.T, s thread.Store) {
	if err := s.Close(); err != nil && !errors.Is(err, thread.ErrClosed) {
		t.Errorf("close: %v", err)
	}
}

// msg returns a user.message draft.
func msg(t testing.TB, cause, text string) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: text})
	require.NoError(t, err)
	return d
}

// readAll reads a thread from seq from and fails the test on an error.
func readAll(t testing.TB, s thread.Store, id string, from uint64) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	for f, err := range s.Read(context.Background(), id, from) {
		require.NoError(t, err)
		out = append(out, f)
	}
	return out
}

// requireChain checks fs is the whole of thread id: seqs from 1 without a
// gap, each Prev the hash of the fact before, and head naming the last.
func requireChain(t testing.TB, id string, fs []facts.Fact, head thread.Head) {
	t.Helper()
	var prev facts.Hash
	for i, f := range fs {
		require.Equal(t, id, f.Thread)
		require.Equal(t, uint64(i+1), f.Seq, "seqs run from 1 without a gap")
		require.Equal(t, prev, f.Prev, "seq %d links to the fact before", f.Seq)
		prev = f.Hash()
	}
	require.Equal(t, uint64(len(fs)), head.Seq)
	require.Equal(t, id, head.Thread)
	if len(fs) > 0 {
		last := fs[len(fs)-1]
		require.Equal(t, last.Hash(), head.Hash)
		require.Equal(t, last.Kind, head.Kind)
		require.True(t, last.At.Equal(head.At), "head time %s, last fact %s", head.At, last.At)
	}
}

func testAppendAndRead(t *testing.T, s thread.Store) {
	ctx := context.Background()
	before := time.Now().Add(-time.Minute)
	h1, err := s.Append(ctx, "t1", 0, msg(t, "ingress/a", "one"))
	require.NoError(t, err)
	require.Equal(t, uint64(1), h1.Seq)

	d2, err := facts.NewDraft(facts.KindModelTurn, "infer/turn/1", facts.ModelTurn{Turn: 1, Text: "two"})
	require.NoError(t, err)
	d3, err := facts.NewDraft(facts.KindBudgetExhausted, "infer/turn/1", facts.BudgetExhausted{Resource: "turns", Limit: 1, Used: 1})
	require.NoError(t, err)
	h3, err := s.Append(ctx, "t1", 1, d2, d3)
	require.NoError(t, err)
	require.Equal(t, uint64(3), h3.Seq)
	require.Equal(t, facts.KindBudgetExhausted, h3.Kind)

	head, err := s.Head(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, h3.Seq, head.Seq)
	require.Equal(t, h3.Hash, head.Hash)
	require.True(t, h3.At.Equal(head.At))

	fs := readAll(t, s, "t1", 1)
	require.Len(t, fs, 3)
	requireChain(t, "t1", fs, head)
	for i, d := range []facts.Draft{msg(t, "ingress/a", "one"), d2, d3} {
		require.Equal(t, d.Kind, fs[i].Kind)
		require.Equal(t, d.Cause, fs[i].Cause)
		require.Equal(t, d.Data, fs[i].Data)
		require.Equal(t, time.UTC, fs[i].At.Location())
		require.True(t, fs[i].At.After(before), "At is the time of the append")
	}
	turn, err := facts.Decode[facts.ModelTurn](fs[1])
	require.NoError(t, err)
	require.Equal(t, "two", turn.Text)
	require.NoError(t, s.Verify(ctx, "t1"))
}

func testAppendIsAllOrNone(t *testing.T, s thread.Store) {
	ctx := context.Background()
	_, err := s.Append(ctx, "t1", 0, msg(t, "ingress/a", "one"))
	require.NoError(t, err)
	bad := facts.Draft{Kind: facts.KindUserMessage, Cause: "ingress/c", Data: []byte{0x81, 0xa3, 'b', 'a', 'd', 0x01}}
	_, err = s.Append(ctx, "t1", 1, msg(t, "ingress/b", "two"), bad)
	require.ErrorIs(t, err, facts.ErrPayload)
	_, err = s.Append(ctx, "t1", 1, msg(t, "ingress/b", "two"), msg(t, "ingress/a", "again"))
	require.ErrorIs(t, err, thread.ErrDuplicateCause, "the second draft's cause is taken")

	require.Len(t, readAll(t, s, "t1", 1), 1, "neither append left a fact")
	has, err := s.HasCause(ctx, "t1", "ingress/b")
	require.NoError(t, err)
	require.False(t, has, "neither append left a cause")
	require.NoError(t, s.Verify(ctx, "t1"))
}

func testReadFromAnySeq(t *testing.T, s thread.Store) {
	ctx := context.Background()
	const n = 7
	for i := range n {
		_, err := s.Append(ctx, "t1", uint64(i), msg(t, fmt.Sprintf("ingress/%d", i), fmt.Sprint(i)))
		require.NoError(t, err)
	}
	all := readAll(t, s, "t1", 1)
	require.Len(t, all, n)
	for from := uint64(0); from <= n+2; from++ {
		got := readAll(t, s, "t1", from)
		first := max(from, 1)
		if first > n {
			require.Empty(t, got, "from %d", from)
			continue
		}
		require.Equal(t, all[first-1:], got, "from %d", from)
	}
}

func testReadStopsWhenAsked(t *testing.T, s thread.Store) {
	ctx := context.Background()
	for i := range 5 {
		_, err := s.Append(ctx, "t1", uint64(i), msg(t, fmt.Sprintf("ingress/%d", i), "x"))
		require.NoError(t, err)
	}
	n := 0
	for f, err := range s.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		n++
		if f.Seq == 2 {
			break
		}
	}
	require.Equal(t, 2, n)
	// The abandoned read holds nothing that blocks the store.
	_, err := s.Append(ctx, "t1", 5, msg(t, "ingress/5", "x"))
	require.NoError(t, err)
}

func testReadSeesOneSnapshot(t *testing.T, s thread.Store) {
	ctx := context.Background()
	for i := range 3 {
		_, err := s.Append(ctx, "t1", uint64(i), msg(t, fmt.Sprintf("ingress/%d", i), "x"))
		require.NoError(t, err)
	}
	var got []uint64
	for f, err := range s.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		got = append(got, f.Seq)
		if f.Seq == 1 {
			_, err := s.Append(ctx, "t1", 3, msg(t, "ingress/3", "appended while reading"))
			require.NoError(t, err)
		}
	}
	require.Equal(t, []uint64{1, 2, 3}, got, "a read ends at the head it started with")
	require.Len(t, readAll(t, s, "t1", 1), 4)
}

func testConflict(t *testing.T, s thread.Store) {
	ctx := context.Background()
	h, err := s.Append(ctx, "t1", 0, msg(t, "ingress/a", "one"))
	require.NoError(t, err)
	for _, after := range []uint64{0, 2, 9} {
		_, err := s.Append(ctx, "t1", after, msg(t, "ingress/b", "two"))
		require.ErrorIs(t, err, thread.ErrConflict, "after %d", after)
		var c *thread.ConflictError
		require.ErrorAs(t, err, &c)
		require.Equal(t, "t1", c.Thread)
		require.Equal(t, after, c.Expected)
		require.Equal(t, h.Seq, c.Actual.Seq)
		require.Equal(t, h.Hash, c.Actual.Hash)
		require.Contains(t, err.Error(), "t1")
	}
	_, err = s.Append(ctx, "new", 3, msg(t, "ingress/a", "one"))
	var c *thread.ConflictError
	require.ErrorAs(t, err, &c)
	require.Equal(t, uint64(0), c.Actual.Seq, "a thread with no facts is at seq 0")
	require.True(t, c.Actual.Hash.IsZero())

	require.Len(t, readAll(t, s, "t1", 1), 1, "a refused append appends nothing")
	_, err = s.Append(ctx, "t1", 1, msg(t, "ingress/b", "two"))
	require.NoError(t, err, "catching up to the actual head succeeds")
}

// testOneWinnerPerRound starts writers together on one thread, all expecting
// the same head: exactly one must win each round.
func testOneWinnerPerRound(t *testing.T, s thread.Store) {
	ctx := context.Background()
	const writers, rounds = 8, 12
	winners := make([]string, rounds)
	for r := range rounds {
		start := make(chan struct{})
		results := make(chan error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			d := msg(t, fmt.Sprintf("w%d/r%d", w, r), "x")
			wg.Go(func() {
				<-start
				_, err := s.Append(ctx, "race", uint64(r), d)
				if err == nil {
					winners[r] = d.Cause
				}
				results <- err
			})
		}
		close(start)
		wg.Wait()
		close(results)
		won := 0
		for err := range results {
			if err == nil {
				won++
				continue
			}
			var c *thread.ConflictError
			require.ErrorAs(t, err, &c)
			require.Equal(t, uint64(r+1), c.Actual.Seq)
		}
		require.Equal(t, 1, won, "round %d", r)
	}
	fs := readAll(t, s, "race", 1)
	head, err := s.Head(ctx, "race")
	require.NoError(t, err)
	requireChain(t, "race", fs, head)
	for r, f := range fs {
		require.Equal(t, winners[r], f.Cause, "the winner's fact is the one stored")
	}
	require.NoError(t, s.Verify(ctx, "race"))
}

// testConcurrentAppendersLoseNothing lets writers race freely on one thread,
// catching up after each conflict, until each has appended its share.
func testConcurrentAppendersLoseNothing(t *testing.T, s thread.Store) {
	ctx := context.Background()
	const writers, each = 8, 10
	type ack struct {
		seq   uint64
		cause string
	}
	acks := make(chan ack, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		drafts := make([]facts.Draft, each)
		for i := range drafts {
			drafts[i] = msg(t, fmt.Sprintf("w%d/%d", w, i), "x")
		}
		wg.Go(func() {
			for i := 0; i < each; {
				after := uint64(0)
				if h, err := s.Head(ctx, "free"); err == nil {
					after = h.Seq
				} else if !errors.Is(err, thread.ErrNotFound) {
					t.Error(err)
					return
				}
				h, err := s.Append(ctx, "free", after, drafts[i])
				if errors.Is(err, thread.ErrConflict) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				acks <- ack{h.Seq, drafts[i].Cause}
				i++
			}
		})
	}
	wg.Wait()
	close(acks)
	fs := readAll(t, s, "free", 1)
	head, err := s.Head(ctx, "free")
	require.NoError(t, err)
	requireChain(t, "free", fs, head)
	require.Len(t, fs, writers*each)
	for a := range acks {
		require.Equal(t, a.cause, fs[a.seq-1].Cause, "acknowledged seq %d holds its fact", a.seq)
	}
	require.NoError(t, s.Verify(ctx, "free"))
}

func testDuplicateCause(t *testing.T, s thread.Store) {
	ctx := context.Background()
	_, err := s.Append(ctx, "t1", 0, msg(t, "ingress/a", "one"))
	require.NoError(t, err)
	tool1, tool2 := msg(t, "tool/execute/call_7", "x"), msg(t, "tool/execute/call_7", "y")
	_, err = s.Append(ctx, "t1", 1, tool1, tool2)
	require.NoError(t, err, "the drafts of one append share a cause")

	for _, tc := range []struct {
		name  string
		after uint64
		cause string
		seq   uint64
	}{
		{"an ingress posted twice", 3, "ingress/a", 1},
		{"a transition run twice", 3, "tool/execute/call_7", 2},
		{"a duplicate with a stale head", 1, "tool/execute/call_7", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(ctx, "t1", tc.after, msg(t, tc.cause, "again"))
			require.ErrorIs(t, err, thread.ErrDuplicateCause)
			require.NotErrorIs(t, err, thread.ErrConflict, "the duplicate is the final answer")
			var d *thread.DuplicateCauseError
			require.ErrorAs(t, err, &d)
			require.Equal(t, "t1", d.Thread)
			require.Equal(t, tc.cause, d.Cause)
			require.Equal(t, tc.seq, d.Seq)
		})
	}
	require.Len(t, readAll(t, s, "t1", 1), 3)
	for cause, want := range map[string]bool{"ingress/a": true, "tool/execute/call_7": true, "ingress/b": false} {
		has, err := s.HasCause(ctx, "t1", cause)
		require.NoError(t, err)
		require.Equal(t, want, has, cause)
	}
}

// testCausesWithinOneAppend appends drafts whose causes interleave: each
// cause is recorded at its first fact, and all are refused afterwards.
func testCausesWithinOneAppend(t *testing.T, s thread.Store) {
	ctx := context.Background()
	_, err := s.Append(ctx, "t1", 0, msg(t, "a", "1"), msg(t, "b", "2"), msg(t, "a", "3"), msg(t, "c", "4"), msg(t, "b", "5"))
	require.NoError(t, err)
	require.NoError(t, s.Verify(ctx, "t1"))
	for cause, seq := range map[string]uint64{"a": 1, "b": 2, "c": 4} {
		_, err := s.Append(ctx, "t1", 5, msg(t, cause, "again"))
		var d *thread.DuplicateCauseError
		require.ErrorAs(t, err, &d, cause)
		require.Equal(t, seq, d.Seq, "cause %s is at its first fact", cause)
	}
}

// testCreateOnce: writers racing to create one thread with the same
// first facts of different causes (a child thread's spawn record and its
// task, appended by every runtime that finds the child missing) create it
// once: one append wins, the others are refused as a conflict or a
// duplicate cause, and the thread holds the winner's facts alone.
func testCreateOnce(t *testing.T, s thread.Store) {
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	ready := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-ready
			_, errs[i] = s.Append(ctx, "p.1-d1", 0, msg(t, "ingress/spawn", fmt.Sprint(i)), msg(t, "ingress/start", fmt.Sprint(i)))
		})
	}
	close(ready)
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil:
			require.Equal(t, -1, won, "two creations succeeded")
			won = i
		default:
			require.True(t, errors.Is(err, thread.ErrConflict) || errors.Is(err, thread.ErrDuplicateCause), "creation %d: %v", i, err)
		}
	}
	require.GreaterOrEqual(t, won, 0, "one creation succeeded")
	fs := readAll(t, s, "p.1-d1", 1)
	require.Len(t, fs, 2)
	for _, f := range fs {
		m, err := facts.Decode[facts.UserMessage](f)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(won), m.Text, "the winner's facts alone")
	}
}

func testCausesBelongToTheirThread(t *testing.T, s thread.Store) {
	ctx := context.Background()
	for _, id := range []string{"a", "a.b", "ab"} {
		_, err := s.Append(ctx, id, 0, msg(t, "ingress/same", id))
		require.NoError(t, err, "the same cause in another thread is a different cause")
	}
	for _, id := range []string{"a", "a.b", "ab"} {
		fs := readAll(t, s, id, 1)
		require.Len(t, fs, 1, "thread %s reads only its own facts", id)
		m, err := facts.Decode[facts.UserMessage](fs[0])
		require.NoError(t, err)
		require.Equal(t, id, m.Text)
	}
	has, err := s.HasCause(ctx, "b", "ingress/same")
	require.NoError(t, err)
	require.False(t, has)
}

func testVerify(t *testing.T, s thread.Store) {
	ctx := context.Background()
	after := uint64(0)
	for i := range 20 {
		drafts := []facts.Draft{msg(t, fmt.Sprintf("step/%d", i), "x")}
		if i%3 == 0 {
			drafts = append(drafts, msg(t, fmt.Sprintf("step/%d", i), "y"), msg(t, fmt.Sprintf("other/%d", i), "z"))
		}
		h, err := s.Append(ctx, "t1", after, drafts...)
		require.NoError(t, err)
		after = h.Seq
	}
	require.NoError(t, s.Verify(ctx, "t1"))
	require.ErrorIs(t, s.Verify(ctx, "nobody"), thread.ErrNotFound)
}

func testUnknownThread(t *testing.T, s thread.Store) {
	ctx := context.Background()
	_, err := s.Head(ctx, "nobody")
	require.ErrorIs(t, err, thread.ErrNotFound)
	require.ErrorContains(t, err, "nobody")
	require.Empty(t, readAll(t, s, "nobody", 1), "an unknown thread reads as empty")
	has, err := s.HasCause(ctx, "nobody", "ingress/a")
	require.NoError(t, err)
	require.False(t, has)
}

func testThreads(t *testing.T, s thread.Store) {
	ctx := context.Background()
	all, err := s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Empty(t, all)

	ids := []string{"m", "b", "a.b", "Z", "a", "b-2", "a0", "c"}
	for i, id := range ids {
		for j := range i%3 + 1 {
			_, err := s.Append(ctx, id, uint64(j), msg(t, fmt.Sprintf("ingress/%d", j), id))
			require.NoError(t, err)
		}
	}
	sorted := []string{"Z", "a", "a.b", "a0", "b", "b-2", "c", "m"} // byte order
	var got []string
	after := ""
	for {
		page, err := s.Threads(ctx, thread.ThreadsPage{After: after, Limit: 3})
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), 3)
		if len(page) == 0 {
			break
		}
		for _, h := range page {
			head, err := s.Head(ctx, h.Thread)
			require.NoError(t, err)
			require.Equal(t, head.Seq, h.Seq)
			require.Equal(t, head.Hash, h.Hash)
			require.Equal(t, head.Kind, h.Kind)
			require.True(t, head.At.Equal(h.At))
			got = append(got, h.Thread)
		}
		after = page[len(page)-1].Thread
	}
	require.Equal(t, sorted, got)

	all, err = s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Len(t, all, len(ids), "no limit means a default page, which holds them all")
	rest, err := s.Threads(ctx, thread.ThreadsPage{After: "a.a"})
	require.NoError(t, err)
	require.Equal(t, "a.b", rest[0].Thread, "After need not be an existing id")
}

func testLargePayload(t *testing.T, s thread.Store) {
	ctx := context.Background()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	_, err := s.Append(ctx, "big", 0, msg(t, "ingress/big", big))
	require.NoError(t, err)
	_, err = s.Append(ctx, "big", 1, msg(t, "ingress/small", "small"))
	require.NoError(t, err)
	fs := readAll(t, s, "big", 1)
	require.Len(t, fs, 2)
	m, err := facts.Decode[facts.UserMessage](fs[0])
	require.NoError(t, err)
	require.Equal(t, big, m.Text)
	require.NoError(t, s.Verify(ctx, "big"))
}

// testLongAppend appends 20k facts of about 450 bytes (about 10 MB) in one
// append, as a fork of a long thread does: it is one unit like any other.
func testLongAppend(t *testing.T, s thread.Store) {
	ctx := context.Background()
	h, err := s.Append(ctx, "long", 0, msg(t, "ingress/start", "x"))
	require.NoError(t, err)
	const n = 20_000
	text := strings.Repeat("y", 400)
	drafts := make([]facts.Draft, n)
	for i := range drafts {
		drafts[i] = msg(t, fmt.Sprintf("copy/%d", i/2), text) // two facts per cause
	}
	h, err = s.Append(ctx, "long", h.Seq, drafts...)
	require.NoError(t, err)
	require.Equal(t, uint64(n+1), h.Seq)
	_, err = s.Append(ctx, "long", h.Seq, msg(t, "copy/1234", "again"))
	var d *thread.DuplicateCauseError
	require.ErrorAs(t, err, &d)
	require.Equal(t, uint64(2+2*1234), d.Seq, "a cause is at its first fact")
	has, err := s.HasCause(ctx, "long", fmt.Sprintf("copy/%d", n/2-1))
	require.NoError(t, err)
	require.True(t, has)
	fs := readAll(t, s, "long", 1)
	requireChain(t, "long", fs, h)
	for i, f := range fs[1:] {
		require.Equal(t, drafts[i].Cause, f.Cause)
		require.Equal(t, drafts[i].Data, f.Data)
	}
	require.Equal(t, fs[n/2:], readAll(t, s, "long", n/2+1))
	require.NoError(t, s.Verify(ctx, "long"))
}

func testEmptyAppend(t *testing.T, s thread.Store) {
	ctx := context.Background()
	_, err := s.Append(ctx, "t1", 0)
	require.ErrorIs(t, err, thread.ErrEmptyAppend)
	_, err = s.Head(ctx, "t1")
	require.ErrorIs(t, err, thread.ErrNotFound, "nothing was created")
}

func testBadThreadIDs(t *testing.T, s thread.Store) {
	ctx := context.Background()
	for _, id := range []string{
		"", "a b", "a\x00b", "a/b", "a*", "a>", ".a", "-a", "_a", "a.", "a..b", "ü", "a\n",
		strings.Repeat("x", thread.MaxIDLen+1),
	} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			require.ErrorIs(t, thread.ValidateID(id), thread.ErrBadThreadID)
			_, err := s.Append(ctx, id, 0, msg(t, "ingress/a", "x"))
			require.ErrorIs(t, err, thread.ErrBadThreadID)
			_, err = s.Head(ctx, id)
			require.ErrorIs(t, err, thread.ErrBadThreadID)
			_, err = s.HasCause(ctx, id, "ingress/a")
			require.ErrorIs(t, err, thread.ErrBadThreadID)
			require.ErrorIs(t, s.Verify(ctx, id), thread.ErrBadThreadID)
			for _, err := range s.Read(ctx, id, 1) {
				require.ErrorIs(t, err, thread.ErrBadThreadID)
			}
		})
	}
	all, err := s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Empty(t, all, "no bad id left a thread behind")

	for _, id := range []string{"a", "A.b-c_d", "0", "fix-login.2025-01-02", strings.Repeat("x", thread.MaxIDLen)} {
		require.NoError(t, thread.ValidateID(id), id)
		_, err := s.Append(ctx, id, 0, msg(t, "ingress/a", "x"))
		require.NoError(t, err, id)
	}
}

func testInvalidDrafts(t *testing.T, s thread.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		draft facts.Draft
		is    error
	}{
		{"no cause", facts.Draft{Kind: facts.KindUserMessage, Data: []byte{0x80}}, facts.ErrInvalid},
		{"no kind", facts.Draft{Cause: "c", Data: []byte{0x80}}, facts.ErrInvalid},
		{"a payload of the wrong kind", facts.Draft{Kind: facts.KindUserMessage, Cause: "c",
			Data: []byte{0x81, 0xaa, 'r', 'e', 'q', 'u', 'e', 's', 't', '_', 'i', 'd', 0xa1, 'q'}}, facts.ErrPayload},
		{"a payload that is not msgpack", facts.Draft{Kind: "app.note", Cause: "c", Data: []byte{0xc1}}, facts.ErrPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(ctx, "t1", 0, tc.draft)
			require.ErrorIs(t, err, tc.is)
		})
	}
	_, err := s.Head(ctx, "t1")
	require.ErrorIs(t, err, thread.ErrNotFound)
}

func testCancelledContext(t *testing.T, s thread.Store) {
	_, err := s.Append(context.Background(), "t1", 0, msg(t, "ingress/a", "x"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err = s.Append(ctx, "t1", 1, msg(t, "ingress/b", "x"))
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Head(ctx, "t1")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.HasCause(ctx, "t1", "ingress/a")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Threads(ctx, thread.ThreadsPage{})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Verify(ctx, "t1"), context.Canceled)
	n := 0
	for f, err := range s.Read(ctx, "t1", 1) {
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, f.Seq)
		n++
	}
	require.Equal(t, 1, n, "a cancelled read yields its error once")

	// Cancelled halfway through a read.
	_, err = s.Append(context.Background(), "t1", 1, msg(t, "ingress/b", "x"), msg(t, "ingress/c", "x"))
	require.NoError(t, err)
	midway, stop := context.WithCancel(context.Background())
	defer stop()
	var seqs []uint64
	var last error
	for f, err := range s.Read(midway, "t1", 1) {
		if err != nil {
			last = err
			continue
		}
		seqs = append(seqs, f.Seq)
		stop()
	}
	require.Equal(t, []uint64{1}, seqs)
	require.ErrorIs(t, last, context.Canceled)

	require.Len(t, readAll(t, s, "t1", 1), 3, "the cancelled append appended nothing")
}

func testClosed(t *testing.T, s thread.Store) {
	ctx := context.Background()
	_, err := s.Append(ctx, "t1", 0, msg(t, "ingress/a", "x"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Close(), thread.ErrClosed)
	_, err = s.Append(ctx, "t1", 1, msg(t, "ingress/b", "x"))
	require.ErrorIs(t, err, thread.ErrClosed)
	_, err = s.Head(ctx, "t1")
	require.ErrorIs(t, err, thread.ErrClosed)
	_, err = s.HasCause(ctx, "t1", "ingress/a")
	require.ErrorIs(t, err, thread.ErrClosed)
	_, err = s.Threads(ctx, thread.ThreadsPage{})
	require.ErrorIs(t, err, thread.ErrClosed)
	require.ErrorIs(t, s.Verify(ctx, "t1"), thread.ErrClosed)
	for _, err := range s.Read(ctx, "t1", 1) {
		require.ErrorIs(t, err, thread.ErrClosed)
	}
}

func testPersistence(t *testing.T, s thread.Store, reopen func(thread.Store) thread.Store) {
	ctx := context.Background()
	after := uint64(0)
	for i := range 5 {
		h, err := s.Append(ctx, "kept", after, msg(t, fmt.Sprintf("ingress/%d", i), fmt.Sprint(i)))
		require.NoError(t, err)
		after = h.Seq
	}
	_, err := s.Append(ctx, "other", 0, msg(t, "ingress/x", "x"))
	require.NoError(t, err)
	before := readAll(t, s, "kept", 1)
	head, err := s.Head(ctx, "kept")
	require.NoError(t, err)

	s = reopen(s)
	require.Equal(t, before, readAll(t, s, "kept", 1))
	again, err := s.Head(ctx, "kept")
	require.NoError(t, err)
	require.Equal(t, head.Seq, again.Seq)
	require.Equal(t, head.Hash, again.Hash)
	require.NoError(t, s.Verify(ctx, "kept"))
	threads, err := s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Len(t, threads, 2)

	_, err = s.Append(ctx, "kept", after, msg(t, "ingress/0", "posted again after a restart"))
	require.ErrorIs(t, err, thread.ErrDuplicateCause, "causes survive a reopen")
	_, err = s.Append(ctx, "kept", after-1, msg(t, "ingress/new", "x"))
	require.ErrorIs(t, err, thread.ErrConflict, "the head survives a reopen")
	h, err := s.Append(ctx, "kept", after, msg(t, "ingress/new", "x"))
	require.NoError(t, err)
	fs := readAll(t, s, "kept", 1)
	requireChain(t, "kept", fs, h)
	require.NoError(t, s.Verify(ctx, "kept"))
}
