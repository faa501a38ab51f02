package drive_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// SubmitNext starts threads under the next free ids and runs none of
// them: each holds its message alone, waiting for a worker.
func TestSubmitNext(t *testing.T) {
	ctx := context.Background()
	e := harnesstest.New(t, `{"text": "Hello."}`)
	var picked []string
	for _, msg := range []string{"One", "Two"} {
		th, err := drive.SubmitNext(ctx, e.RT, e.Actor, msg, func(id, _ string) { picked = append(picked, id) })
		require.NoError(t, err)
		st, err := drive.Inspect(ctx, th)
		require.NoError(t, err)
		require.Equal(t, harness.StatusResumable, st.Status)
		require.EqualValues(t, 1, st.Head.Seq)
	}
	require.Equal(t, []string{"t1", "t2"}, picked)
	require.Zero(t, e.Model.Calls())
}
