package rerun

import (
	"fmt"
	"io"
	"os"
)

// MaxOverrideFile bounds a file an override is read from (--instructions,
// --system-prompt-file): its text goes into every request of the rerun.
const MaxOverrideFile = 1 << 20

// ReadOverrideFile reads the override in the file at path: a regular
// file (a FIFO, a device or a directory — /dev/zero, say, behind a
// symlink a repository planted — is never read) of at most
// MaxOverrideFile bytes. Its errors wrap ErrOverride.
func ReadOverrideFile(path string) ([]byte, error) {
	// Looked at before it is opened: opening a FIFO waits for a writer.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%v)", ErrOverride, path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOverride, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOverride, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%v)", ErrOverride, path, fi.Mode().Type())
	}
	if fi.Size() > MaxOverrideFile {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d an override may hold", ErrOverride, path, fi.Size(), MaxOverrideFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxOverrideFile+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOverride, err)
	}
	if len(b) > MaxOverrideFile {
		return nil, fmt.Errorf("%w: %s grew past the %d bytes an override may hold", ErrOverride, path, MaxOverrideFile)
	}
	return b, nil
}
