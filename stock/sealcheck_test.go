package stock_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/stock"
)

// SealCheckOf takes a key as given or from a file of keys, and a witness
// log that is there; a bad key, a file of something else, or a witness
// log that is not there is refused, saying which.
func TestSealCheckOf(t *testing.T) {
	dir := t.TempDir()
	k1, _, err := seal.OpenKey(filepath.Join(dir, "k1.pem"))
	require.NoError(t, err)
	k2, _, err := seal.OpenKey(filepath.Join(dir, "k2.pem"))
	require.NoError(t, err)
	keys := filepath.Join(dir, "keys")
	require.NoError(t, os.WriteFile(keys, []byte("# ours\n"+string(k2.Public())+"\n"), 0o644))
	witness := filepath.Join(dir, "witness.jsonl")
	require.NoError(t, os.WriteFile(witness, nil, 0o644))

	c, err := stock.SealCheckOf([]string{string(k1.Public()), keys}, []string{witness})
	require.NoError(t, err)
	require.Equal(t, stock.SealCheck{Keys: []seal.PublicKey{k1.Public(), k2.Public()}, Witnesses: []string{witness}}, c)

	_, err = stock.SealCheckOf([]string{"ed25519:AAAA"}, nil)
	require.ErrorIs(t, err, stock.ErrSealKeys)
	require.ErrorIs(t, err, seal.ErrBadKey)
	require.NotErrorIs(t, err, stock.ErrWitnessLog)

	_, err = stock.SealCheckOf([]string{witness + ".nope"}, nil)
	require.ErrorIs(t, err, stock.ErrSealKeys)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, "neither a key")

	_, err = stock.SealCheckOf([]string{filepath.Join(dir, "k1.pem")}, nil) // a private key file is no list of public keys
	require.ErrorIs(t, err, stock.ErrSealKeys)

	_, err = stock.SealCheckOf([]string{keys}, []string{witness, filepath.Join(dir, "gone.jsonl")})
	require.ErrorIs(t, err, stock.ErrWitnessLog)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NotErrorIs(t, err, stock.ErrSealKeys)
}
