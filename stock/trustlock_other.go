//go:build !unix

package stock

import "os"

// lockTrustFile opens the lock file at path and locks nothing (no flock
// here): two trust changes at the same moment may lose one of them.
func lockTrustFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
