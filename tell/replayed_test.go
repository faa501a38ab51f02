package tell_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// The end of a replay: without verify it holds and says nothing of a
// check; verified, a log that fails, or seals that fail, do not hold,
// and each is said.
func TestReplayed(t *testing.T) {
	r := stock.Replayed{Tree: audit.TreeAudit{Audit: audit.Audit{Thread: "t1"}}}
	var w bytes.Buffer
	require.True(t, tell.Replayed(&w, r, false, "--key", brackets))
	require.Empty(t, w.String())

	w.Reset()
	require.True(t, tell.Replayed(&w, r, true, "--key", brackets))
	require.Contains(t, w.String(), "unsealed")

	w.Reset()
	bad := r
	bad.Verify = errors.New("hash chain broken at seq 3")
	require.False(t, tell.Replayed(&w, bad, true, "--key", brackets))
	require.Contains(t, w.String(), "hash chain broken at seq 3")

	w.Reset()
	bad = r
	bad.SealsErr = errors.New("witness log torn")
	bad.Seals = seal.Report{}
	require.False(t, tell.Replayed(&w, bad, true, "--key", brackets))
	require.Contains(t, w.String(), "witness log torn")
}
