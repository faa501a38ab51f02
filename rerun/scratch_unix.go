//go:build unix

package rerun

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownScratch refuses a scratch copy, found at info, that is not this
// user's alone: owned by another user, or writable by others (a
// directory in a shared /tmp that someone else made, or made again under
// the recorded name once the copy was gone, would have the rerun's
// approved commands run on their files).
func ownScratch(dir string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("%w %s is owned by user %d, not by you (%d): a copy another user made is never gone on in", ErrScratch, dir, st.Uid, uid)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w %s is writable by others (%v): a copy others may change is never gone on in", ErrScratch, dir, info.Mode().Perm())
	}
	return nil
}
