package tell_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// A replay told as it goes says what Audit says of the whole record, and
// returns the same record (its entries told, not kept); a thread that is not there tells nothing.
func TestReplayTold(t *testing.T) {
	s, m, _ := scriptedSession(t, `{"text": "writing", "tool_calls": [{"id": "c1", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"hi\\n\"}"}]}
{"text": "Done\u001b[2J."}
`)
	ctx := t.Context()
	approval := s.Approval
	approval.Mode = "all"
	d, err := s.NewDriver(approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	th, _, err := d.Start(ctx, "t1", facts.UserMessage{Text: "write"}, "ana", false, nil)
	require.NoError(t, err)
	_, err = d.Finish(ctx, th, d.Options(), nil)
	require.NoError(t, err)

	whole, err := audit.ReplayTree(ctx, s.Store, s.Stock.Actor, "t1")
	require.NoError(t, err)
	var want, got bytes.Buffer
	tell.Audit(&want, whole.Audit, brackets)
	tree, err := tell.ReplayTold(&got, brackets)(ctx, s.Store, s.Stock.Actor, "t1")
	require.NoError(t, err)
	require.Equal(t, want.String(), got.String())
	require.Contains(t, got.String(), "status: done")
	require.Contains(t, got.String(), "action.completed")
	require.NotContains(t, got.String(), "\x1b")
	whole.Entries = nil // told, not kept
	require.Equal(t, whole, tree)

	// Verified in the same reading, it tells the same, and the log
	// verifies.
	var verified bytes.Buffer
	vtree, verr, err := tell.ReplayVerifiedTold(&verified, brackets)(ctx, s.Store, s.Stock.Actor, "t1")
	require.NoError(t, err)
	require.NoError(t, verr)
	require.Equal(t, want.String(), verified.String())
	require.Equal(t, tree.Audit.Status, vtree.Audit.Status)

	got.Reset()
	_, err = tell.ReplayTold(&got, brackets)(ctx, s.Store, s.Stock.Actor, "t9")
	require.Error(t, err)
	require.NotContains(t, got.String(), "status:")
}
