//go:build !unix

package sandbox

import "os"

// gitFileFlags opens a git file to read.
const gitFileFlags = os.O_RDONLY

// dirFlags opens a directory to list.
const dirFlags = os.O_RDONLY
