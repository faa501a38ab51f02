//go:build !linux

package action

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// Elsewhere the walk goes through os.Root, one directory at a time, and
// checks each directory it opens against the entry it listed, since a Root
// follows links that stay inside it.

// dirFD is an open directory of the walk.
type dirFD struct{ r *os.Root }

// sysStat is what the walk keeps of a stat record.
type sysStat struct {
	mode  fs.FileMode
	key   statKey
	nlink uint64
	fi    fs.FileInfo
}

// trustedDir is the stat record of a directory whose key the walk has
// from its last reading: no feed here, so it is never asked for.
func trustedDir(k statKey) sysStat { return sysStat{mode: fs.ModeDir, key: k} }

// ownFileOf: elsewhere a file's identity is not carried between
// processes; an action in doubt lists what the recovering process sees.
func ownFileOf(sysStat) (ownFile, bool) { return ownFile{}, false }

// lstatOwn: see ownFileOf.
func lstatOwn(string) (ownFile, bool) { return ownFile{}, false }

// sameFile reports whether two stat records describe one file.
func sameFile(a, b sysStat) bool { return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi) }

// sameDevice: no feed is used here, so any answer does.
func sameDevice(a, b sysStat) bool { return true }

// infoKey is the key of the file fi describes, as the walk's stat record
// gives it.
func infoKey(fi fs.FileInfo) statKey { return statKeyOf(fi) }

func statOf(fi fs.FileInfo) sysStat {
	return sysStat{mode: fi.Mode(), key: statKeyOf(fi), nlink: nlinkOf(fi.Sys()), fi: fi}
}

func openRootDir(path string) (dirFD, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return dirFD{}, err
	}
	return dirFD{r}, nil
}

// errReplaced: the entry was not the directory it was a moment before.
var errReplaced = errors.New("replaced while being opened")

func (d dirFD) openDir(name string) (dirFD, error) {
	fi, err := d.r.Lstat(name)
	switch {
	case err != nil:
		return dirFD{}, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return dirFD{}, syscall.ELOOP
	case !fi.IsDir():
		return dirFD{}, syscall.ENOTDIR
	}
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return dirFD{}, err
	}
	opened, err := r.Stat(".")
	if err != nil || !os.SameFile(fi, opened) {
		r.Close()
		if err == nil {
			err = errReplaced
		}
		return dirFD{}, err
	}
	return dirFD{r}, nil
}

func (d dirFD) close() { d.r.Close() }

func (d dirFD) stat() (sysStat, error) {
	fi, err := d.r.Stat(".")
	if err != nil {
		return sysStat{}, err
	}
	return statOf(fi), nil
}

func (d dirFD) lstat(name string) (sysStat, error) {
	fi, err := d.r.Lstat(name)
	if err != nil {
		return sysStat{}, err
	}
	return statOf(fi), nil
}

func (d dirFD) names() ([]string, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// namesLike lists the directory's entries as names does, unless they are
// exactly the names of old (sorted by name): then it says so (same).
func (d dirFD) namesLike(old []entry) (names []string, same bool, err error) {
	names, err = d.names()
	if err != nil || old == nil || len(names) != len(old) {
		return names, false, err
	}
	sorted := slices.Sorted(slices.Values(names))
	for i := range sorted {
		if sorted[i] != old[i].name {
			return names, false, nil
		}
	}
	return nil, true, nil
}

// rewind: names opens the directory anew each time.
func (d dirFD) rewind() error { return nil }

// fileFD is a regular file the walk opened to read.
type fileFD struct{ *os.File }

// openRead opens name to read it. A Root follows a link that stays inside
// it: the caller checks that the file opened is the one it listed.
func (d dirFD) openRead(name string) (fileFD, error) {
	f, err := d.r.OpenFile(name, openFlags, 0)
	return fileFD{f}, err
}

// stat describes the open file.
func (f fileFD) stat() (sysStat, error) { return fstatFile(f.File) }

func fstatFile(f *os.File) (sysStat, error) {
	fi, err := f.Stat()
	if err != nil {
		return sysStat{}, err
	}
	return statOf(fi), nil
}

func (d dirFD) readlink(name string) (string, error) { return d.r.Readlink(name) }

func errNotLink(err error) bool { return errors.Is(err, syscall.EINVAL) }

func errLoop(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, errReplaced) }

func statPath(path string) (sysStat, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return sysStat{}, err
	}
	return statOf(fi), nil
}

// localFS: without inotify there is no change feed to trust.
func localFS(string) (bool, uint32, error) { return false, 0, nil }
