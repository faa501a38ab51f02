package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/stock"
)

// OpenTree opens a thread through its tree: a root is the session's
// actor's; a log that says it is a child of a parent that never spawned
// it is refused, where Thread would fold it as a root.
func TestDriverOpenTree(t *testing.T) {
	s, spec := driverSession(t, `{"approve": "all"}`)
	m, err := stock.LoadModel(spec)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	th, _, err := d.Start(ctx, "t1", facts.UserMessage{Text: "Write a.txt"}, "ana", false, nil)
	require.NoError(t, err)
	_, err = d.Finish(ctx, th, d.Options(), nil)
	require.NoError(t, err)

	root, err := d.OpenTree(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, "t1", root.ID())

	forged, err := facts.NewDraft(facts.KindThreadSpawned, "ingress/x", facts.ThreadSpawned{Parent: "t1", Seq: 2, Hash: "00", Key: "k", CallID: "c9", Task: "x"})
	require.NoError(t, err)
	_, err = s.Store.Append(ctx, "t1.1-c9", 0, forged)
	require.NoError(t, err)
	_, err = d.OpenTree(ctx, "t1.1-c9")
	require.Error(t, err, "t1 spawned no such child")
	require.NotNil(t, d.Thread("t1.1-c9"))
}
