package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
)

// A session stops a parked thread as a person's word: the facts it
// appends are shown as they are appended and returned, and the thread
// ends stopped; an unknown thread is refused.
func TestSessionStop(t *testing.T) {
	s, spec := driverSession(t, "")
	m, err := stock.LoadModel(spec)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	th, _, err := d.Start(ctx, "", facts.UserMessage{Text: "Write a.txt"}, "ana", false, nil)
	require.NoError(t, err)
	st, err := d.Finish(ctx, th, d.Options(), nil)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status, "the write asks a person")

	var shown []facts.Kind
	st, appended, err := s.Stop(ctx, "t1", "ana", "not now", func(f facts.Fact, err error) {
		require.NoError(t, err)
		shown = append(shown, f.Kind)
	})
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, st.Status)
	require.Contains(t, st.Reason, "not now")
	require.NotEmpty(t, appended)
	kinds := make([]facts.Kind, len(appended))
	for i, f := range appended {
		kinds[i] = f.Kind
	}
	require.Equal(t, kinds, shown)
	require.Contains(t, kinds, facts.KindThreadStopped)
	require.Equal(t, st.Head.Seq, appended[len(appended)-1].Seq)

	_, appended, err = s.Stop(ctx, "t9", "ana", "", nil)
	require.Error(t, err)
	require.Empty(t, appended)
}
