package tools_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// mknodZero makes a character device at path with /dev/zero's numbers,
// or skips the test where that is not allowed.
func mknodZero(t *testing.T, path string) {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat("/dev/zero", &st))
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(st.Rdev)); err != nil {
		t.Skipf("cannot make a character device here (%v); the symlink cases cover the rest", err)
	}
}
