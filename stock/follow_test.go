package stock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// Follow gives the facts of a thread as another session appends them: on
// a store in a directory it lets go of the store between looks, so that
// the session that drives the thread can open it, and it ends with the
// thread, saying how it stands.
func TestFollowLetsGoOfTheStoreAndEndsWithTheThread(t *testing.T) {
	root := t.TempDir()
	getenv := sessionEnv(t, "")
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: getenv, Create: true})
	require.NoError(t, err)
	_, _, err = s.Submit(ctx, "t1", "Say done", nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	place, err = stock.Locate(root, "")
	require.NoError(t, err)

	f, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: getenv, ReadOnly: true, Lenient: true})
	require.NoError(t, err)
	defer f.Close()
	var (
		mu   sync.Mutex // guards seen
		seen []facts.Kind
	)
	type ended struct {
		st  harness.Status
		err error
	}
	end := make(chan ended, 1)
	go func() {
		st, err := f.Follow(ctx, "t1", 1, func(fact facts.Fact) error {
			mu.Lock()
			seen = append(seen, fact.Kind)
			mu.Unlock()
			return nil
		})
		end <- ended{st.Status, err}
	}()

	// The driving session opens the store while Follow has let go of it
	// (it waits while Follow looks).
	d, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: getenv, Wait: 10 * time.Second})
	require.NoError(t, err)
	script, err := model.ParseScript("done", []byte(`{"text": "Done."}`))
	require.NoError(t, err)
	rt, free, err := d.Runtime(stock.WithModel(script), stock.WithoutObserver())
	require.NoError(t, err)
	out, err := rt.Thread(d.Stock.Actor, "t1").Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	free()
	require.NoError(t, d.Close())

	select {
	case e := <-end:
		require.NoError(t, e.err)
		require.Equal(t, harness.StatusDone, e.st)
	case <-time.After(20 * time.Second):
		t.Fatal("Follow did not end with the thread")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, facts.KindUserMessage, seen[0])
	require.Equal(t, facts.KindModelTurn, seen[len(seen)-1], "every fact, the last one too")
}
