package stock_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// Trust changes made at the same moment all land: each reads the file,
// changes it and saves it under the trust file's lock, so none saves
// over what another saved in between (two `harness trust` runs, or a
// trust beside an "always for this project").
func TestTrustChangesAtOnceAllLand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "harness", "trusted.json")
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = stock.UpdateTrust(path, false, func(tr *stock.Trust) (bool, error) {
				// Between the read and the save: where an unlocked
				// change loses another's.
				time.Sleep(5 * time.Millisecond)
				tr.Grant("/ws", fmt.Sprintf("/ws/settings-%d.toml", i), "d")
				return true, nil
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	got, err := stock.LoadTrust(path)
	require.NoError(t, err)
	require.Len(t, got.Trusted, n, "a change saved over another")

	// A change that changes nothing writes nothing; a broken file is an
	// error unless the change may start from nothing.
	require.NoError(t, os.WriteFile(path, []byte("{broken"), 0o600))
	err = stock.UpdateTrust(path, false, func(*stock.Trust) (bool, error) { return true, nil })
	require.ErrorIs(t, err, stock.ErrTrustFile)
	require.NoError(t, stock.UpdateTrust(path, true, func(*stock.Trust) (bool, error) { return false, nil }))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "{broken", string(b))
	require.NoError(t, stock.UpdateTrust(path, true, func(tr *stock.Trust) (bool, error) {
		tr.Grant("/ws", "/ws/a.toml", "d")
		return true, nil
	}))
	got, err = stock.LoadTrust(path)
	require.NoError(t, err)
	require.Len(t, got.Trusted, 1)
}
