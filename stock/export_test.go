package stock_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/stock"
)

// An export of a thread's log verifies against the stock actor, naming
// its thread and counting its facts; a byte changed in it, another
// thread's id, or an empty export does not.
func TestVerifyExport(t *testing.T) {
	s, _ := rerunSession(t, stock.Rerun{})
	var b bytes.Buffer
	require.NoError(t, facts.WriteJSONSeq(&b, s.Store.Read(ctx, "t1", 1)))
	export := b.String()

	id, n, err := s.Place.VerifyExport(strings.NewReader(export), "")
	require.NoError(t, err)
	require.Equal(t, "t1", id)
	require.Equal(t, strings.Count(export, "\n"), n)
	require.Greater(t, n, 4)

	_, _, err = s.Place.VerifyExport(strings.NewReader(export), "t2")
	require.Error(t, err, "the facts are t1's")

	tampered := strings.Replace(export, `Write a.txt`, `Write b.txt`, 1)
	require.NotEqual(t, export, tampered)
	_, _, err = s.Place.VerifyExport(strings.NewReader(tampered), "")
	require.ErrorIs(t, err, facts.ErrHashMismatch, "the export's own hash no longer holds")

	_, n, err = s.Place.VerifyExport(strings.NewReader(""), "")
	require.ErrorIs(t, err, stock.ErrEmptyExport)
	require.Zero(t, n)

	_, _, err = s.Place.VerifyExport(strings.NewReader("{not json\n"), "")
	require.Error(t, err)
}
