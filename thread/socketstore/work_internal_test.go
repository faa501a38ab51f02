package socketstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// TestUnsentTakeIsNotADelivery: jobs whose take could not be told to the
// client's worker (serveWork's reply failed) are given back as never
// given out: the next taker's Delivered is 1, and it may take the thread
// as followed.
func TestUnsentTakeIsNotADelivery(t *testing.T) {
	store, err := thread.OpenPebble(filepath.Join(t.TempDir(), "db"))
	require.NoError(t, err)
	defer store.Close()
	w := NewWork(store, 0, 0)
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/m", facts.UserMessage{Text: "hi"})
	require.NoError(t, err)
	w.Appended("t1", thread.Head{Thread: "t1", Seq: 1}, []facts.Draft{d})

	remote := w.taker(true)
	var ids []uint64
	require.NoError(t, remote.Take(context.Background(), 8, time.Second, func(j *Job) { ids = append(ids, j.ID) }))
	require.Len(t, ids, 1)
	remote.unsent(ids)
	remote.Close()

	var got []*Job
	require.NoError(t, w.Taker().Take(context.Background(), 8, time.Second, func(j *Job) { got = append(got, j) }))
	require.Len(t, got, 1)
	require.Equal(t, uint64(1), got[0].Delivered, "the unsent take was not a delivery")
}
