package helper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// handledFS is every file-system right Landlock knows at abi: what the
// ruleset denies unless a rule allows it.
func handledFS(abi int) uint64 {
	h := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: execute … make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		h |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return h
}

// fileRights are the rights a rule on a file (not a directory) may
// grant.
const fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// restrict puts the calling thread in a Landlock domain:
//
//   - read and execute everything but /dev (listing directories
//     everywhere);
//   - in /dev, read and write only null, zero and full, and read random
//     and urandom: not a terminal (the person's /dev/pts/N), not a disk;
//   - everything beneath the writable roots (the workspace in
//     workspace-write, the temporary directory, the Go cache), but a
//     link or move into another directory (REFER) only beneath the
//     workspace and Refer (its git directories);
//   - from ABI 6, no signal to and no abstract Unix socket of a process
//     outside the domain; from ABI 9, no connect to a named Unix socket
//     outside the writable roots (an ssh-agent, a Docker daemon).
//
// A Landlock domain also forbids mount and umount, so the command cannot
// uncover what hides the store. The caller has set no_new_privs.
func restrict(req Request) error {
	h := handledFS(req.ABI)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: h}
	if req.ABI >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("create a ruleset (ABI %d): %w", req.ABI, errno)
	}
	ruleset := int(r)
	defer unix.Close(ruleset)

	const read = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	if err := allow(ruleset, "/", unix.LANDLOCK_ACCESS_FS_READ_DIR, false); err != nil {
		return err
	}
	entries, err := os.ReadDir("/")
	if err != nil {
		return fmt.Errorf("list /: %w", err)
	}
	for _, e := range entries {
		if e.Name() == "dev" {
			continue
		}
		if err := allow(ruleset, filepath.Join("/", e.Name()), read, true); err != nil {
			return err
		}
	}
	devRW := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_TRUNCATE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV) & h
	for _, d := range []struct {
		path   string
		access uint64
	}{
		{"/dev", unix.LANDLOCK_ACCESS_FS_READ_DIR},
		{"/dev/null", devRW}, {"/dev/zero", devRW}, {"/dev/full", devRW},
		{"/dev/random", unix.LANDLOCK_ACCESS_FS_READ_FILE}, {"/dev/urandom", unix.LANDLOCK_ACCESS_FS_READ_FILE},
	} {
		if err := allow(ruleset, d.path, d.access, true); err != nil {
			return err
		}
	}
	for _, w := range req.Writable {
		access := h
		if w != req.Dir && !slices.Contains(req.Refer, w) {
			// Linking or moving a file into another directory (REFER)
			// only within the workspace and its git directories: a hard
			// link from the workspace into the temporary directory or
			// the Go cache would let a command write a workspace file
			// through a path the workspace's change feed does not watch.
			// A move out of them fails with EXDEV, which mv and most
			// tools meet by copying.
			access &^= unix.LANDLOCK_ACCESS_FS_REFER
		}
		if err := allow(ruleset, w, access, true); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("restrict self: %w", errno)
	}
	return nil
}

// allow adds a rule granting access beneath path (only the file rights,
// when path is not a directory). A path that does not exist is skipped
// when optional.
func allow(ruleset int, path string, access uint64, optional bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if optional && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES)) {
			return nil
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("allow %s: %w", path, errno)
	}
	return nil
}
