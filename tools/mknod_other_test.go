//go:build unix && !linux

package tools_test

import "testing"

// mknodZero skips: the device numbers' encoding is Linux's.
func mknodZero(t *testing.T, path string) {
	t.Skip("mknod of /dev/zero's numbers is tried on Linux only")
}
