//go:build linux

package action

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux the walk talks to the kernel directly: one fstatat per entry
// into a stack-allocated record, relative to the directory's descriptor,
// with no FileInfo, no path splitting and no allocation per file. A stat
// is most of what an unchanged tree costs, and git pays the same.

// dirFD is an open directory of the walk.
type dirFD struct{ fd int }

// sysStat is what the walk keeps of a stat record.
type sysStat struct {
	mode  fs.FileMode
	key   statKey
	dev   uint64
	nlink uint64
}

// trustedDir is the stat record of a directory whose key the walk has
// from its last reading (see walk.quiet).
func trustedDir(k statKey) sysStat { return sysStat{mode: fs.ModeDir, key: k, dev: k.dev} }

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

func (s sysStat) id() fileID { return fileID{s.dev, s.key.ino} }

// ownFileOf is the identity of the file st describes.
func ownFileOf(st sysStat) (ownFile, bool) { return ownFile{Dev: st.dev, Ino: st.key.ino}, true }

// lstatOwn is the identity of the regular file at path (a link is not
// followed); false for anything else.
func lstatOwn(path string) (ownFile, bool) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Lstat(path, &st) }); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ownFile{}, false
	}
	return ownFile{Dev: uint64(st.Dev), Ino: st.Ino}, true
}

// sameFile reports whether two stat records describe one file.
func sameFile(a, b sysStat) bool { return a.id() == b.id() }

// sameDevice reports whether two stat records are of one file system.
func sameDevice(a, b sysStat) bool { return a.dev == b.dev }

func statOf(st *unix.Stat_t) sysStat {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return sysStat{
		mode: m,
		key: statKey{
			size:  int64(st.Size),
			mtime: int64(st.Mtim.Sec)*1e9 + int64(st.Mtim.Nsec),
			ctime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec),
			ino:   uint64(st.Ino),
			dev:   uint64(st.Dev),
		},
		dev:   uint64(st.Dev),
		nlink: uint64(st.Nlink),
	}
}

// infoKey is the key of the file fi describes, as the walk's stat record
// gives it: with the device.
func infoKey(fi fs.FileInfo) statKey {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statKeyOf(fi)
	}
	return statKey{
		size:  st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
		ino:   st.Ino,
		dev:   st.Dev,
	}
}

// retry repeats a call interrupted by a signal.
func retry(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// openRootDir opens the workspace root (following a link, as the root may
// be named through one).
func openRootDir(path string) (dirFD, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return dirFD{-1}, err
	}
	return dirFD{fd}, nil
}

// openDir opens the subdirectory name, never through a link.
func (d dirFD) openDir(name string) (dirFD, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return dirFD{-1}, err
	}
	return dirFD{fd}, nil
}

func (d dirFD) close() { unix.Close(d.fd) }

// stat describes the directory itself.
func (d dirFD) stat() (sysStat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(d.fd, &st) }); err != nil {
		return sysStat{}, err
	}
	return statOf(&st), nil
}

// lstat describes the entry name, not following a link.
func (d dirFD) lstat(name string) (sysStat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return sysStat{}, err
	}
	return statOf(&st), nil
}

// rewind sets the directory's listing back to its start, so that names
// lists it whole again on a descriptor listed before (the root kept).
func (d dirFD) rewind() error {
	return retry(func() error {
		_, err := unix.Seek(d.fd, 0, io.SeekStart)
		return err
	})
}

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// names lists the directory's entries, "." and ".." left out, unsorted.
func (d dirFD) names() ([]string, error) {
	names, _, err := d.namesLike(nil)
	return names, err
}

// namesLike lists the directory's entries as names does, unless they are
// exactly the names of old (sorted by name, as a directory record keeps
// them): then it says so (same) and makes no string. A directory listed
// again only because its listing was racily clean most often still holds
// the names it held: comparing them where the kernel put them spares a
// string for each, and the sort.
func (d dirFD) namesLike(old []entry) (names []string, same bool, err error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := (*bp)[:0]
	for {
		if cap(buf)-len(buf) < 8<<10 {
			buf = slices.Grow(buf, cap(buf))
		}
		var n int
		err = retry(func() (err error) {
			n, err = unix.ReadDirent(d.fd, buf[len(buf):cap(buf)])
			return err
		})
		if err != nil || n <= 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if cap(buf) <= 1<<20 {
		*bp = buf[:0] // keep the grown buffer, up to a MiB
	}
	if err == nil && old != nil {
		if same, ok := sameNames(buf, old); ok && same {
			return nil, true, nil
		}
	}
	_, _, names = unix.ParseDirent(buf, -1, nil)
	return names, false, err
}

// direntName walks the linux_dirent64 records in buf: it returns the name
// of the record at off (nil for one that names nothing: no inode, or "."
// or "..") and the offset of the next; ok is false at the end or at a
// record that does not fit.
func direntName(buf []byte, off int) (name []byte, next int, ok bool) {
	// d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name.
	const nameAt = 19
	if off+nameAt > len(buf) {
		return nil, off, false
	}
	reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
	if reclen <= nameAt || off+reclen > len(buf) {
		return nil, off, false
	}
	next = off + reclen
	name = buf[off+nameAt : next]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	if binary.NativeEndian.Uint64(buf[off:]) == 0 || string(name) == "." || string(name) == ".." {
		return nil, next, true
	}
	return name, next, true
}

// sameNames reports whether the records in buf name exactly the entries
// of old, each once; ok is false when buf does not parse (the caller
// then lists as names does, which says what it can).
func sameNames(buf []byte, old []entry) (same, ok bool) {
	seen := make([]bool, len(old))
	count := 0
	for off := 0; off < len(buf); {
		name, next, fine := direntName(buf, off)
		if !fine {
			return false, false
		}
		off = next
		if name == nil {
			continue
		}
		lo, hi := 0, len(old)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if old[m].name < string(name) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(old) || old[lo].name != string(name) || seen[lo] {
			return false, true
		}
		seen[lo] = true
		count++
	}
	return count == len(old), true
}

// fileFD is a regular file the walk opened to read, held by its
// descriptor: making an *os.File of it would ask the kernel for its flags,
// try to add it to the runtime's poller (which refuses a regular file),
// and make it blocking again when its descriptor is asked for — three
// calls more per file read than the read needs.
type fileFD struct{ fd int }

// openRead opens the regular file name to read it: never through a link,
// and never waiting for a writer should a pipe have taken its place.
func (d dirFD) openRead(name string) (fileFD, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return fileFD{-1}, err
	}
	return fileFD{fd}, nil
}

// Read reads up to len(b) bytes; io.EOF at the end.
func (f fileFD) Read(b []byte) (int, error) {
	var n int
	err := retry(func() (err error) {
		n, err = unix.Read(f.fd, b)
		return err
	})
	switch {
	case err != nil:
		return 0, err
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// Close closes the file.
func (f fileFD) Close() error { return unix.Close(f.fd) }

// stat describes the open file.
func (f fileFD) stat() (sysStat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(f.fd, &st) }); err != nil {
		return sysStat{}, err
	}
	return statOf(&st), nil
}

// fstatFile describes an open file.
func fstatFile(f *os.File) (sysStat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(int(f.Fd()), &st) }); err != nil {
		return sysStat{}, err
	}
	return statOf(&st), nil
}

// readlink returns the target of the link name.
func (d dirFD) readlink(name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		var n int
		err := retry(func() (err error) {
			n, err = unix.Readlinkat(d.fd, name, buf)
			return err
		})
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// errNotLink is what readlink says of an entry that is not a link.
func errNotLink(err error) bool { return errors.Is(err, unix.EINVAL) }

// errLoop is what opening says of an entry that is a link when links are
// not followed.
func errLoop(err error) bool { return errors.Is(err, unix.ELOOP) }

// statPath describes what path names, following links: how the store's
// directory is recognised wherever it is reached from.
func statPath(path string) (sysStat, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Stat(path, &st) }); err != nil {
		return sysStat{}, err
	}
	return statOf(&st), nil
}

// localFS reports whether the file system holding path is one whose every
// change the kernel's inotify sees: a local one, not a network or FUSE
// mount, where another machine or a user-space server can change files
// without the kernel hearing of it.
func localFS(path string) (bool, uint32, error) {
	var s unix.Statfs_t
	if err := retry(func() error { return unix.Statfs(path, &s) }); err != nil {
		return false, 0, err
	}
	t := uint32(s.Type)
	switch int64(t) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.RAMFS_MAGIC, unix.BCACHEFS_SUPER_MAGIC,
		unix.REISERFS_SUPER_MAGIC, unix.NILFS_SUPER_MAGIC, 0x2fc12fc1 /* zfs */, 0x3153464a /* jfs */ :
		return true, t, nil
	}
	return false, t, nil
}
