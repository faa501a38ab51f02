//go:build !unix

package action

import (
	"errors"
	"os"
)

// errNoLock: this system has no file lock the shared ledger uses; a
// Ledger then knows only its own process's actions.
var errNoLock = errors.New("no file lock on this system")

func lockFile(*os.File) (func(), error) { return nil, errNoLock }

func alive(int) bool { return false }
