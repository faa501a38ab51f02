package seal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/seal"
)

func TestReadKeys(t *testing.T) {
	dir := t.TempDir()
	k1, _, err := seal.OpenKey(filepath.Join(dir, "a.pem"))
	require.NoError(t, err)
	k2, _, err := seal.OpenKey(filepath.Join(dir, "b.pem"))
	require.NoError(t, err)

	got, err := seal.ReadKeys(string(k1.Public()))
	require.NoError(t, err)
	require.Equal(t, []seal.PublicKey{k1.Public()}, got)

	file := filepath.Join(dir, "keys")
	require.NoError(t, os.WriteFile(file, []byte("# the team\n"+string(k1.Public())+"  # ana\n\n"+string(k2.Public())+"\n"), 0o644))
	got, err = seal.ReadKeys(file)
	require.NoError(t, err)
	require.Equal(t, []seal.PublicKey{k1.Public(), k2.Public()}, got)

	require.NoError(t, os.WriteFile(file, []byte(string(k1.Public())+"\nnot a key\n"), 0o644))
	_, err = seal.ReadKeys(file)
	require.ErrorIs(t, err, seal.ErrBadKey)
	require.ErrorContains(t, err, file+" line 2: ")

	_, err = seal.ReadKeys("ed25519:!!")
	require.ErrorIs(t, err, seal.ErrBadKey)
	_, err = seal.ReadKeys(filepath.Join(dir, "none"))
	require.ErrorContains(t, err, "neither a key (ed25519:…) nor a file of keys")

	// A file past the bound is not read to its end: a line of a key
	// beyond 1 MiB is never read.
	require.NoError(t, os.WriteFile(file, []byte(strings.Repeat("#\n", 1<<19)+string(k1.Public())+"\n"), 0o644))
	got, err = seal.ReadKeys(file)
	require.NoError(t, err)
	require.Empty(t, got)
}
