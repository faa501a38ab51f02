package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) thread.Store {
			opts := freshStream()
			s, err := natsstore.Dial(context.Background(), shared.ClientURL(), opts...)
			require.NoError(t, err)
			reopen[s] = opts
			return s
		},
		Reopen: func(t *testing.T, s thread.Store) thread.Store {
			require.NoError(t, s.Close())
			r, err := natsstore.Dial(context.Background(), shared.ClientURL(), reopen[s.(*natsstore.Store)]...)
			require.NoError(t, err)
			return r
		},
	})
}

// reopen remembers the stream of each store the conformance suite opened.
// The suite runs its subtests one at a time.
var reopen = map[*natsstore.Store][]natsstore.Option{}

func msg(t testing.TB, cause, text string) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: text})
	require.NoError(t, err)
	return d
}

func readAll(t testing.TB, s thread.Store, id string) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	for f, err := range s.Read(context.Background(), id, 1) {
		require.NoError(t, err)
		out = append(out, f)
	}
	return out
}

// TestTwoStoresRace races appends to one thread from two stores on two
// connections, as two processes would: each writer appends its causes,
// catching up after each conflict, and half the causes are posted by both
// stores. Every cause must end up in the log exactly once, with no gap.
func TestTwoStoresRace(t *testing.T) {
	opts := freshStream()
	stores := []*natsstore.Store{dial(t, shared, opts...), dial(t, shared, opts...)}
	ctx := context.Background()
	const writersPerStore, each = 4, 12
	var wg sync.WaitGroup
	for si, s := range stores {
		for w := range writersPerStore {
			wg.Go(func() {
				for i := range each {
					// Writer w of both stores posts the shared causes.
					cause := fmt.Sprintf("s%d/w%d/%d", si, w, i)
					if i%2 == 0 {
						cause = fmt.Sprintf("shared/w%d/%d", w, i)
					}
					d := msg(t, cause, "x")
					for {
						after := uint64(0)
						if h, err := s.Head(ctx, "race.one"); err == nil {
							after = h.Seq
						} else if !errors.Is(err, thread.ErrNotFound) {
							t.Error(err)
							return
						}
						_, err := s.Append(ctx, "race.one", after, d)
						if errors.Is(err, thread.ErrConflict) {
							continue
						}
						if err != nil && !errors.Is(err, thread.ErrDuplicateCause) {
							t.Error(err)
							return
						}
						break
					}
				}
			})
		}
	}
	wg.Wait()
	fs := readAll(t, stores[1], "race.one")
	seen := map[string]int{}
	for i, f := range fs {
		require.Equal(t, uint64(i+1), f.Seq)
		seen[f.Cause]++
	}
	want := 2*writersPerStore*each/2 + writersPerStore*each/2
	require.Len(t, fs, want)
	for c, n := range seen {
		require.Equal(t, 1, n, "cause %s", c)
	}
	require.NoError(t, stores[0].Verify(ctx, "race.one"))
}

// TestThreadIDWithDots keeps ids that differ only where a subject would
// split them apart.
func TestThreadIDWithDots(t *testing.T) {
	s := dial(t, shared, freshStream()...)
	ctx := context.Background()
	ids := []string{"a.b", "a", "a.b.c", "ab", "a-b", "fix-login.2025-01-02"}
	for i, id := range ids {
		for j := range i + 1 {
			_, err := s.Append(ctx, id, uint64(j), msg(t, fmt.Sprintf("ingress/%d", j), id))
			require.NoError(t, err)
		}
	}
	for i, id := range ids {
		fs := readAll(t, s, id)
		require.Len(t, fs, i+1, id)
		for _, f := range fs {
			require.Equal(t, id, f.Thread)
		}
		require.NoError(t, s.Verify(ctx, id))
	}
	heads, err := s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	var got []string
	for _, h := range heads {
		got = append(got, h.Thread)
	}
	require.Equal(t, []string{"a", "a-b", "a.b", "a.b.c", "ab", "fix-login.2025-01-02"}, got)
}

// TestCancelledAppendAppendsNothing alternates appends of two facts with a
// live context and with a cancelled one: the cancelled ones fail with
// context.Canceled and leave nothing, and the log stays whole.
func TestCancelledAppendAppendsNothing(t *testing.T) {
	s := dial(t, shared, freshStream()...)
	var after uint64
	for i := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		if i%2 == 1 {
			cancel()
		}
		h, err := s.Append(ctx, "t", after, msg(t, fmt.Sprintf("c/%d", i), "x"), msg(t, fmt.Sprintf("c/%d", i), "y"))
		cancel()
		if i%2 == 1 {
			require.ErrorIs(t, err, context.Canceled)
			continue
		}
		require.NoError(t, err)
		after = h.Seq
	}
	fs := readAll(t, s, "t")
	require.Len(t, fs, 50)
	require.NoError(t, s.Verify(context.Background(), "t"))
}

// TestServerRestart stops the server and starts it again on the same
// directory: every acknowledged append is still there.
func TestServerRestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := startServer(dir, -1)
	require.NoError(t, err)
	ctx := context.Background()
	s := dial(t, srv)
	var head thread.Head
	for i := range 10 {
		head, err = s.Append(ctx, "kept", head.Seq, msg(t, fmt.Sprintf("ingress/%d", i), "x"))
		require.NoError(t, err)
	}
	blob, err := s.PutBlob(ctx, []byte("kept content"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	srv.Shutdown()
	srv.WaitForShutdown()

	srv, err = startServer(dir, -1)
	require.NoError(t, err)
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	s = dial(t, srv)
	got, err := s.Head(ctx, "kept")
	require.NoError(t, err)
	require.Equal(t, head.Seq, got.Seq)
	require.Equal(t, head.Hash, got.Hash)
	require.NoError(t, s.Verify(ctx, "kept"))
	_, err = s.Append(ctx, "kept", head.Seq, msg(t, "ingress/3", "again"))
	require.ErrorIs(t, err, thread.ErrDuplicateCause)
	data, err := s.GetBlob(ctx, blob)
	require.NoError(t, err)
	require.Equal(t, "kept content", string(data))
	_, release, err := s.Lease(ctx, "kept")
	require.NoError(t, err)
	release()
	require.NoError(t, s.Close())
}
