package socketstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// telling is a store that tells its queue of work of every append, as
// the harness server's store does.
type telling struct {
	thread.Store
	w *socketstore.Work
}

func (s telling) Append(ctx context.Context, id string, after uint64, ds ...facts.Draft) (thread.Head, error) {
	h, err := s.Store.Append(ctx, id, after, ds...)
	if err == nil {
		s.w.Appended(id, h, ds)
	}
	return h, err
}

// serveWork serves a Pebble store in dir with a queue of work whose jobs
// settle after settle; drives is what the server says its own process
// drives.
func serveWork(t *testing.T, dir string, settle time.Duration, drives int) (*thread.PebbleStore, *socketstore.Work) {
	t.Helper()
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	require.NoError(t, err)
	w := socketstore.NewWork(store, settle, drives)
	ln, err := socketstore.Listen(dir)
	require.NoError(t, err)
	srv := socketstore.NewServer(telling{store, w}, harness.Hold, socketstore.WithWork(w))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
		store.Close()
	})
	return store, w
}

func draft(t *testing.T, cause string) facts.Draft {
	d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: "hi"})
	require.NoError(t, err)
	return d
}

// take takes the jobs a taker is given within wait.
func take(t *testing.T, w interface {
	Take(context.Context, int, time.Duration, func(*socketstore.Job)) error
}, wait time.Duration) []*socketstore.Job {
	t.Helper()
	var got []*socketstore.Job
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && len(got) == 0 {
		require.NoError(t, w.Take(context.Background(), 8, 100*time.Millisecond, func(j *socketstore.Job) { got = append(got, j) }))
	}
	return got
}

// TestWorkThroughTheSocket: a start posted through the server is one job,
// given out once it settled, to one taker only; a runtime's append makes
// none; the job of a taker whose connection ends (its process died) is
// given to another; a taker cannot finish a job it does not hold.
func TestWorkThroughTheSocket(t *testing.T) {
	dir := t.TempDir()
	_, w := serveWork(t, dir, 300*time.Millisecond, 2)
	poster := dial(t, dir)
	a, b := dial(t, dir), dial(t, dir)
	wa, err := a.Work(context.Background())
	require.NoError(t, err)
	wb, err := b.Work(context.Background())
	require.NoError(t, err)
	info := dial(t, dir).Info()
	require.True(t, info.Work)
	require.Equal(t, 2, info.Drives)
	require.Equal(t, 2, info.Workers, "two workers of other processes take work")

	ctx := context.Background()
	posted := time.Now()
	_, err = poster.Append(ctx, "t1", 0, draft(t, "ingress/start"), draft(t, "ingress/policy"))
	require.NoError(t, err)
	_, err = poster.Append(ctx, "t1", 2, draft(t, "ingress/m2"))
	require.NoError(t, err)
	_, err = poster.Append(ctx, "t2", 0, draft(t, "infer/turn/1"))
	require.NoError(t, err)

	got := take(t, wa, 3*time.Second)
	require.GreaterOrEqual(t, time.Since(posted), 300*time.Millisecond, "given out only once it settled")
	require.Len(t, got, 1, "two ingress appends before it was given out are one job; a runtime's append makes none")
	j := got[0]
	require.Equal(t, "t1", j.Thread)
	require.Equal(t, uint64(3), j.Seq)
	require.Equal(t, uint64(1), j.Delivered)
	f, err := j.Followed(ctx)
	require.NoError(t, err)
	require.False(t, f)
	require.Empty(t, take(t, wb, 500*time.Millisecond), "one taker at a time")

	require.Error(t, wb.FinishForTest(j.ID), "b does not hold a's job")

	_, err = poster.Append(ctx, "t1", 3, draft(t, "infer/turn/2"))
	require.NoError(t, err)
	f, err = j.Followed(ctx)
	require.NoError(t, err)
	require.True(t, f)

	// a's process dies: its connection ends, its job goes to b.
	require.NoError(t, a.Close())
	got = take(t, wb, 3*time.Second)
	require.Len(t, got, 1)
	require.Equal(t, "t1", got[0].Thread)
	require.Equal(t, uint64(2), got[0].Delivered)
	require.NoError(t, got[0].Later(0))
	got = take(t, wb, 3*time.Second)
	require.Len(t, got, 1)
	require.Equal(t, uint64(3), got[0].Delivered)
	require.NoError(t, got[0].Done())
	require.Error(t, got[0].Done(), "finished once")
	require.Empty(t, take(t, wb, 500*time.Millisecond))
	require.Empty(t, take(t, w.Taker(), 300*time.Millisecond), "nothing left for the server's own process either")
}

// TestWorkScan: the threads whose last append was posted from outside
// (submitted, or answered, while no server kept the queue) are jobs at
// once; the others are not.
func TestWorkScan(t *testing.T) {
	dir := t.TempDir()
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = store.Append(ctx, "t1", 0, draft(t, "ingress/start"))
	require.NoError(t, err)
	_, err = store.Append(ctx, "t2", 0, draft(t, "ingress/start"))
	require.NoError(t, err)
	_, err = store.Append(ctx, "t2", 1, draft(t, "infer/turn/1"))
	require.NoError(t, err)
	w := socketstore.NewWork(store, time.Hour, 0)
	require.NoError(t, w.Scan(ctx))
	got := take(t, w.Taker(), time.Second)
	require.Len(t, got, 1)
	require.Equal(t, "t1", got[0].Thread)
	require.NoError(t, store.Close())
}

// TestWorkOfAServerWithoutAQueue: a server that gives out no work says
// so to a client that asks.
func TestWorkOfAServerWithoutAQueue(t *testing.T) {
	dir := t.TempDir()
	serveDir(t, dir)
	c := dial(t, dir)
	require.False(t, c.Info().Work)
	_, err := c.Work(context.Background())
	require.ErrorIs(t, err, socketstore.ErrNoWork)
}

// TestWorkGivenBackJoinsLaterPosts: a job given back is one job with the
// posts made to its thread while it was out, and with those made after;
// counted as given out before, so the next taker looks at the thread.
func TestWorkGivenBackJoinsLaterPosts(t *testing.T) {
	store, err := thread.OpenPebble(filepath.Join(t.TempDir(), "db"))
	require.NoError(t, err)
	defer store.Close()
	w := socketstore.NewWork(store, 200*time.Millisecond, 0)
	post := func(id string, seq uint64) {
		w.Appended(id, thread.Head{Thread: id, Seq: seq}, []facts.Draft{draft(t, "ingress/m")})
	}
	a, b := w.Taker(), w.Taker()
	defer a.Close()
	defer b.Close()

	// A post while the job is out, then the job given back.
	post("t1", 1)
	got := take(t, a, 3*time.Second)
	require.Len(t, got, 1)
	post("t1", 2)
	require.NoError(t, got[0].Later(0))
	got = take(t, b, 3*time.Second)
	require.Len(t, got, 1, "the given-back job and the later post are one job")
	require.Equal(t, uint64(2), got[0].Seq)
	require.Equal(t, uint64(2), got[0].Delivered, "given out before")
	require.Empty(t, take(t, b, 400*time.Millisecond))
	require.NoError(t, got[0].Done())

	// The job given back, then a post: the post joins it.
	post("t2", 1)
	got = take(t, a, 3*time.Second)
	require.Len(t, got, 1)
	require.NoError(t, got[0].Later(100*time.Millisecond))
	post("t2", 2)
	got = take(t, b, 3*time.Second)
	require.Len(t, got, 1, "a post after the job was given back joins it")
	require.Equal(t, uint64(2), got[0].Seq)
	require.Equal(t, uint64(2), got[0].Delivered)
	require.Empty(t, take(t, b, 400*time.Millisecond))

	// A taker that goes away gives its job back into the same join.
	c := w.Taker()
	post("t3", 1)
	got = take(t, c, 3*time.Second)
	require.Len(t, got, 1)
	post("t3", 2)
	c.Close()
	got = take(t, b, 3*time.Second)
	require.Len(t, got, 1)
	require.Equal(t, uint64(2), got[0].Seq)
	require.Empty(t, take(t, b, 400*time.Millisecond))
}
