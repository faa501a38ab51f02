package thread

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// openInternal opens a store in a temporary directory, closed when the
// test ends.
func openInternal(t *testing.T) *PebbleStore {
	s, err := OpenPebble(t.TempDir(), WithMinFree(0))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// batchOf returns a batch setting key to key.
func batchOf(db *pebble.DB, key string) *pebble.Batch {
	b := db.NewBatch()
	if err := b.Set([]byte(key), []byte(key), nil); err != nil {
		panic(err)
	}
	return b
}

func requireKeys(t *testing.T, db *pebble.DB, keys []string, there bool) {
	t.Helper()
	for _, k := range keys {
		_, ok, err := get(db, []byte(k))
		require.NoError(t, err)
		require.Equal(t, there, ok, "key %s", k)
	}
}

// TestGroupCommitSharesOneCommit holds a group's free-space reading while
// ten more appends arrive: they commit together, as the next group, after
// one reading; a group refused for want of room writes none of its
// batches, and the next group commits.
func TestGroupCommitSharesOneCommit(t *testing.T) {
	s := openInternal(t)
	var g groupCommit
	var readings atomic.Int32
	hold, arrived := make(chan struct{}), make(chan struct{})
	var refuse atomic.Bool
	room := func() error {
		if readings.Add(1) == 1 {
			close(arrived)
			<-hold
		}
		if refuse.Load() {
			return ErrDiskFull
		}
		return nil
	}
	first := make(chan error)
	go func() { first <- g.commit(s.db, room, batchOf(s.db, "k0")) }()
	<-arrived // the first group is reading the free space

	var wg sync.WaitGroup
	errs := make([]error, 10)
	keys := make([]string, 10)
	for i := range errs {
		keys[i] = fmt.Sprintf("k%d", i+1)
		wg.Go(func() { errs[i] = g.commit(s.db, room, batchOf(s.db, keys[i])) })
	}
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.queue) == 10
	}, 30*time.Second, time.Millisecond)
	close(hold)
	require.NoError(t, <-first)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, 2, readings.Load(), "the ten waiting appends shared one reading")
	requireKeys(t, s.db, append(keys, "k0"), true)

	// Refused: nothing of the group is written.
	refuse.Store(true)
	var refused []string
	for i := range 5 {
		refused = append(refused, fmt.Sprintf("r%d", i))
	}
	for _, k := range refused {
		wg.Go(func() {
			err := g.commit(s.db, room, batchOf(s.db, k))
			require.True(t, errors.Is(err, ErrDiskFull), "%v", err)
		})
	}
	wg.Wait()
	requireKeys(t, s.db, refused, false)
	refuse.Store(false)
	require.NoError(t, g.commit(s.db, room, batchOf(s.db, "after")))
	requireKeys(t, s.db, []string{"after"}, true)
	require.False(t, g.leading, "no leader is left")
}

// TestGroupCommitUnderLoad has 32 goroutines commit 50 batches each
// through one groupCommit: every batch is written, every call returns,
// and no leader is left.
func TestGroupCommitUnderLoad(t *testing.T) {
	s := openInternal(t)
	var g groupCommit
	var readings atomic.Int32
	room := func() error { readings.Add(1); return nil }
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := range 50 {
				if err := g.commit(s.db, room, batchOf(s.db, fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w := range 32 {
		for i := range 50 {
			requireKeys(t, s.db, []string{fmt.Sprintf("w%d-%d", w, i)}, true)
		}
	}
	require.False(t, g.leading)
	require.Empty(t, g.queue)
	t.Logf("%d readings for %d commits", readings.Load(), 32*50)
}

// TestGroupCommitLeaderPanics has the leader of a group panic while it
// reads the free space: the appends waiting in its group get an error,
// not a wait forever, and the next group commits.
func TestGroupCommitLeaderPanics(t *testing.T) {
	s := openInternal(t)
	var g groupCommit
	var readings atomic.Int32
	hold, arrived := make(chan struct{}), make(chan struct{})
	room := func() error {
		switch readings.Add(1) {
		case 1:
			close(arrived)
			<-hold
		case 2:
			panic("reading the free space")
		}
		return nil
	}
	first := make(chan error)
	go func() { first <- g.commit(s.db, room, batchOf(s.db, "k0")) }()
	<-arrived
	var wg sync.WaitGroup
	var panicked atomic.Int32
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			defer func() {
				if recover() != nil {
					panicked.Add(1)
				}
			}()
			errs[i] = g.commit(s.db, room, batchOf(s.db, fmt.Sprint("p", i)))
		})
	}
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.queue) == 3
	}, 30*time.Second, time.Millisecond)
	close(hold)
	require.NoError(t, <-first)
	wg.Wait()
	require.EqualValues(t, 1, panicked.Load(), "the second group's leader panicked")
	abandoned := 0
	for _, err := range errs {
		if errors.Is(err, errGroupAbandoned) {
			abandoned++
		}
	}
	require.Equal(t, 2, abandoned, "the rest of its group were told")
	require.NoError(t, g.commit(s.db, room, batchOf(s.db, "after")))
	requireKeys(t, s.db, []string{"after"}, true)
}

// An append by one writer allocates nothing of its own in the store: its
// group member, the group's slice, the thread's lock entry and the
// fact's hash are all kept from the appends before it (the README says
// so; a group's slice made anew for each append was one allocation).
func TestAppendAllocatesNothing(t *testing.T) {
	if raceOn {
		t.Skip("the race detector makes sync.Pool drop what is put back")
	}
	s := openInternal(t)
	const warm, runs = 20, 2000
	drafts := make([]facts.Draft, warm+runs+1)
	for i := range drafts {
		d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("c/%d", i), facts.UserMessage{Text: "hello"})
		require.NoError(t, err)
		drafts[i] = d
	}
	ctx := context.Background()
	seq := uint64(0)
	appendOne := func() {
		if _, err := s.Append(ctx, "t", seq, drafts[seq]); err != nil {
			t.Fatal(err)
		}
		seq++
	}
	for range warm {
		appendOne()
	}
	require.Zero(t, testing.AllocsPerRun(runs, appendOne))
}

// A group of several is committed in a batch the group commit keeps for
// the next: a group one of whose batches cannot be applied commits none
// of them, and leaves nothing of theirs to the next group (the kept
// batch is put back only after a commit that succeeded).
func TestGroupCommitKeepsNoFailedBatch(t *testing.T) {
	s := openInternal(t)
	var g groupCommit
	room := func() error { return nil }
	group := func(bs ...*pebble.Batch) []*groupMember {
		var ms []*groupMember
		for _, b := range bs {
			ms = append(ms, &groupMember{b: b})
		}
		return ms
	}
	require.NoError(t, g.commitGroup(s.db, room, group(batchOf(s.db, "a"), batchOf(s.db, "b"))))
	requireKeys(t, s.db, []string{"a", "b"}, true)
	require.NotNil(t, g.batch, "kept for the next group")
	require.Zero(t, g.batch.Count(), "kept empty")

	// A batch whose record has a kind Pebble does not know.
	var corrupt pebble.Batch
	require.NoError(t, corrupt.SetRepr([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x60, 1, 'x'}))
	err := g.commitGroup(s.db, room, group(batchOf(s.db, "c"), &corrupt))
	require.ErrorIs(t, err, pebble.ErrInvalidBatch)
	require.Nil(t, g.batch, "a batch that failed is not kept")

	require.NoError(t, g.commitGroup(s.db, room, group(batchOf(s.db, "d"), batchOf(s.db, "e"))))
	requireKeys(t, s.db, []string{"d", "e"}, true)
	requireKeys(t, s.db, []string{"c", "x"}, false)
}
