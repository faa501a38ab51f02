//go:build !unix

package thread

import "os"

// freeBytes cannot tell the space left here: writes are not refused early.
func freeBytes(*os.File) (uint64, bool) { return 0, false }
