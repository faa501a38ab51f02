package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
	"github.com/seed-7cc7a084/harness/worker"
)

// A server's work: a thread submitted while nobody served the store is
// found by the scan and driven to its end; with no drives it is found
// and left for the workers.
func TestServeWork(t *testing.T) {
	for _, n := range []int{0, 1} {
		ctx := context.Background()
		root := t.TempDir()
		script := filepath.Join(root, "s.jsonl")
		require.NoError(t, os.WriteFile(script, []byte(`{"text": "nothing to do"}`+"\n"), 0o644))
		place, err := stock.Locate(root, "")
		require.NoError(t, err)
		s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Create: true, Drive: true})
		require.NoError(t, err)
		id, _, err := s.SubmitThread(ctx, "", "look", "ana", false)
		require.NoError(t, err)
		work := socketstore.NewWork(s.Store, 0, n)
		stop, err := worker.ServeWork(ctx, s, work, worker.Options{Concurrency: n,
			LoadModel: func(string) (model.Model, error) { return stock.LoadModel("scripted:" + script) }})
		require.NoError(t, err)
		status := func() harness.Status {
			st, err := s.Inspect(ctx, id)
			require.NoError(t, err)
			return st.Status
		}
		if n == 0 {
			require.NoError(t, stop())
			require.NotEqual(t, harness.StatusDone, status(), "no drives: nothing driven")
		} else {
			require.Eventually(t, func() bool { return status() == harness.StatusDone }, 30*time.Second, 20*time.Millisecond)
			require.NoError(t, stop())
		}
		require.NoError(t, s.Close())
	}
}
