package stock_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
)

// SealHead seals the head of a log that verifies, into the person's own
// witness log, where a check of the log then finds it holding; a thread
// that is not there is not sealed.
func TestSealHead(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	e.RunApproved("t")
	cfg := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	p := e.Stock.Place
	entry, witness, err := p.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "t", false)
	require.NoError(t, err)
	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, head.Seq, entry.Seq)
	require.Equal(t, head.Hash, entry.Hash)
	require.Equal(t, filepath.Join(cfg, "harness"), filepath.Dir(filepath.Dir(witness)))

	r, err := p.VerifySeals(ctx, getenv, e.Store, "t", stock.SealCheck{})
	require.NoError(t, err)
	require.True(t, r.Sealed())

	_, _, err = p.SealHead(ctx, getenv, e.Store, e.Stock.Actor, "nobody", false)
	require.Error(t, err)
}
