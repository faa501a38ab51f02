package action

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultBlobCap is the largest file whose bytes [WithBlobs] keeps unless
// told otherwise: 1 MiB.
const DefaultBlobCap int64 = 1 << 20

// DefaultRacyWindow is how much older than the start of an observation a
// file's mtime and ctime must be for the file to be remembered as clean.
const DefaultRacyWindow = 2 * time.Second

// hashHeader opens the canonical byte layout of a workspace hash.
const hashHeader = "harness.workspace.v1\x00"

// Workspace observes a directory tree: an [Observer] whose snapshot lists
// every regular file and symlink under the root with its SHA-256 and mode.
// It keeps a stat cache between observations so unchanged files are not
// read again. Unlike an identity taken from git, it sees every file, so a
// changed untracked file counts. Observe may be called from several
// goroutines; calls are serialized. One observation stats and reads with
// up to max(8, GOMAXPROCS) goroutines.
//
// # Scope
//
// Every regular file and symlink under the root, recursively, except:
//
//   - any entry named exactly ".git", at any depth and of any type: a
//     repository's (or a submodule's, or a nested repository's) metadata
//     directory, or the ".git" file a worktree or submodule keeps instead —
//     never workspace content, and git itself refuses to track such a path;
//   - the entry ".harness" at the root (the runtime's own store; a
//     ".harness" deeper down is ordinary content);
//   - whatever [WithSkipPaths] and [WithSkipFunc] add;
//   - directories themselves (an empty directory is not observed, as in
//     git), and named pipes, sockets and devices, which have no content to
//     read (opening a pipe could block).
//
// Symlinks are recorded and never followed: the entry's Link is the target
// as stored, its Digest the SHA-256 of that target string, its Mode has
// fs.ModeSymlink. A link into a directory does not bring the directory's
// files into scope; a link that leads outside the root is recorded like
// any other.
//
// # Hash
//
// [Snapshot.Hash] is the lower-case hex SHA-256 of this byte string:
//
//	"harness.workspace.v1\x00"
//	then, for each entry in path order:
//	    class   one byte: 'f' regular file, 'x' executable regular file,
//	            'l' symlink
//	    ' '
//	    digest  64 bytes: the entry's Digest, lower-case hex
//	    ' '
//	    path    the entry's Path, slash-separated, relative to the root
//	    0x00    (a path never contains NUL, so the layout is unambiguous)
//
// Paths are sorted by byte order (Go's string order). The mode counts only
// as that class: a file that gains or loses its owner execute bit (the bit
// git records, 100644 vs 100755) or turns into a symlink has changed; other
// permission bits (group/other, read/write) and times do not, so two
// checkouts of one tree under different umasks hash alike. Nothing else —
// no time, size or inode — goes into the hash.
//
// # Stat cache
//
// A Workspace remembers, in memory, per regular file, the (size, mtime,
// ctime, inode) it saw and the digest it read, and does not read a file
// again while those are unchanged; a new Workspace starts with nothing
// remembered and reads everything once. A failed observation leaves the
// cache as it was. ctime and inode come from the platform's
// stat record (FileInfo.Sys) where it has them (Linux, the BSDs, macOS);
// elsewhere the key is size and mtime. Symlinks are not cached (reading a
// link's target costs one call).
//
// # Racily clean entries
//
// A file written in the same timestamp tick as the
// moment it was read can change again without its stat record changing;
// git calls such an entry racily clean. The rule here: every observation
// takes a snapshot time, the wall clock at its start less the racy window
// ([DefaultRacyWindow] unless [WithRacyWindow] says otherwise), and a file
// read during it is remembered as clean only if its mtime and its ctime are
// both strictly older than the snapshot time. Anything else is read again
// next time, and again until an observation starts late enough. The window
// covers the kernel's coarse timestamp clock lagging the wall clock and
// filesystems that keep times to the second; raise it for a filesystem
// whose clock is far from this machine's (network mounts) or whose
// granularity is coarser (FAT: 2 s). The clock decides only what is re-read,
// never what is hashed.
type Workspace struct {
	root       string
	skipPaths  map[string]bool
	skipFunc   func(path string, dir bool) bool
	blobs      Blobs
	blobCap    int64
	racyWindow time.Duration
	workers    int

	// now and before are test hooks: the clock that sets the snapshot
	// time, and a call made before a file's content is read (op "read") or
	// a subdirectory is opened (op "list"); an error it returns is handled
	// as the open's error.
	now    func() time.Time
	before func(op, rel string) error

	mu    sync.Mutex // serializes Observe; guards cache and gen
	cache map[string]*cacheEntry
	gen   uint64 // observations begun

	putMu sync.Mutex // serializes PutBlob calls
}

// statKey is what a file's stat record must still say for its cached digest
// to be trusted.
type statKey struct {
	size  int64
	mtime int64 // ns since the epoch
	ctime int64 // ns since the epoch; 0 where the platform has none
	ino   uint64
}

type cacheEntry struct {
	key    statKey
	digest string
	seen   uint64 // the last observation that found the file unchanged
}

// WorkspaceOption configures a [Workspace].
type WorkspaceOption func(*Workspace) error

// WithBlobs keeps the bytes of every file the workspace reads whose size is
// at most limit (limit <= 0 means [DefaultBlobCap]) in b, so a later diff or
// undo can fetch the contents before and after an action — whoever changed
// them, a tool or a shell command. Larger files are recorded by digest
// only. A file is stored when it is read, so a file the stat cache spares
// is not stored again. Calls to b.PutBlob are serialized.
func WithBlobs(b Blobs, limit int64) WorkspaceOption {
	return func(w *Workspace) error {
		if b == nil {
			return errors.New("WithBlobs: nil Blobs")
		}
		if limit <= 0 {
			limit = DefaultBlobCap
		}
		w.blobs, w.blobCap = b, limit
		return nil
	}
}

// WithSkipPaths leaves out the entries at these paths (slash-separated,
// relative to the root) and, for a directory, everything under it, in
// addition to ".git" and the root's ".harness".
func WithSkipPaths(paths ...string) WorkspaceOption {
	return func(w *Workspace) error {
		for _, p := range paths {
			if p == "" || p == "." || path.IsAbs(p) || path.Clean(p) != p || !filepath.IsLocal(filepath.FromSlash(p)) {
				return fmt.Errorf("WithSkipPaths: %q is not a clean slash-separated path inside the workspace", p)
			}
			w.skipPaths[p] = true
		}
		return nil
	}
}

// WithSkipFunc leaves out every entry for which skip returns true, in
// addition to ".git" and the root's ".harness". path is slash-separated and
// relative to the root; dir says whether the entry is a directory, whose
// contents are then not visited. skip is called from several goroutines.
func WithSkipFunc(skip func(path string, dir bool) bool) WorkspaceOption {
	return func(w *Workspace) error {
		if skip == nil {
			return errors.New("WithSkipFunc: nil function")
		}
		prev := w.skipFunc
		w.skipFunc = func(p string, dir bool) bool { return (prev != nil && prev(p, dir)) || skip(p, dir) }
		return nil
	}
}

// WithRacyWindow sets how much older than the start of an observation a
// file's timestamps must be for its digest to be trusted next time (see
// [DefaultRacyWindow]). A window below zero is an error.
func WithRacyWindow(d time.Duration) WorkspaceOption {
	return func(w *Workspace) error {
		if d < 0 {
			return fmt.Errorf("WithRacyWindow: negative window %v", d)
		}
		w.racyWindow = d
		return nil
	}
}

// NewWorkspace returns an observer of the directory root.
func NewWorkspace(root string, opts ...WorkspaceOption) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", abs)
	}
	w := &Workspace{
		root:       abs,
		skipPaths:  map[string]bool{},
		racyWindow: DefaultRacyWindow,
		workers:    max(8, runtime.GOMAXPROCS(0)),
		now:        time.Now,
		cache:      map[string]*cacheEntry{},
	}
	for _, opt := range opts {
		if err := opt(w); err != nil {
			return nil, fmt.Errorf("workspace %s: %w", abs, err)
		}
	}
	return w, nil
}

// Root is the absolute path of the observed directory.
func (w *Workspace) Root() string { return w.root }

// Observe reads the workspace: every file in scope with its digest and
// mode, sorted by path, and the workspace hash. A file that vanishes while
// it is being observed is simply not in the snapshot; any other failure to
// read a path (a permission error, say) fails the observation with an
// error naming the path. A cancelled context ends it promptly with the
// context's error.
func (w *Workspace) Observe(ctx context.Context) (Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Snapshot{}, fmt.Errorf("observe %s: %w", w.root, err)
	}
	w.gen++
	wk := &walk{
		w:     w,
		gen:   w.gen,
		since: w.now().Add(-w.racyWindow).UnixNano(),
		fresh: map[string]*cacheEntry{},
	}
	wk.ctx, wk.cancel = context.WithCancelCause(ctx)
	defer wk.cancel(nil)
	files, err := wk.run()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return Snapshot{}, fmt.Errorf("observe %s: %w", w.root, err)
	}
	// The cache keeps the entries this observation found unchanged or read
	// clean; the rest (removed, changed, racy) go.
	for rel, c := range wk.fresh {
		c.seen = wk.gen
		w.cache[rel] = c
	}
	for rel, c := range w.cache {
		if c.seen != wk.gen {
			delete(w.cache, rel)
		}
	}
	return Snapshot{Hash: hashFiles(files), Files: files}, nil
}

// modeClass is the part of a file's mode that counts as content: 'l' for a
// symlink, 'x' for a regular file with its owner execute bit set, 'f' for
// any other regular file.
func modeClass(m fs.FileMode) byte {
	switch {
	case m&fs.ModeSymlink != 0:
		return 'l'
	case m&0o100 != 0:
		return 'x'
	}
	return 'f'
}

// hashFiles is the workspace hash over files sorted by path, in the layout
// documented above.
func hashFiles(files []FileState) string {
	h := sha256.New()
	buf := make([]byte, 0, 64<<10)
	buf = append(buf, hashHeader...)
	for _, f := range files {
		buf = append(buf, modeClass(f.Mode), ' ')
		buf = append(buf, f.Digest...)
		buf = append(buf, ' ')
		buf = append(buf, f.Path...)
		buf = append(buf, 0)
		if len(buf) > 60<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// maxAttempts bounds how often a path that keeps changing type or identity
// under the walk is looked at again before the observation gives up.
const maxAttempts = 4

// errUnstable: a path kept changing while it was being observed.
var errUnstable = errors.New("kept changing while being observed")

// fileChunk is how many entries of one directory one job observes.
const fileChunk = 256

// walk is one observation in progress. Directories are opened as
// [os.Root]s and their entries looked at relative to them, so a path is
// resolved once per directory, not once per file, and nothing is reached
// through a link.
type walk struct {
	w      *Workspace
	ctx    context.Context
	cancel context.CancelCauseFunc
	gen    uint64 // this observation's number, marking the cache entries it saw
	since  int64  // the snapshot time: ns since the epoch

	// The work pool: jobs waiting for an idle worker.
	poolMu sync.Mutex
	wake   *sync.Cond
	jobs   []func() error
	idle   int // workers waiting for a job
	busy   int // workers running a job
	done   bool

	mu    sync.Mutex
	fresh map[string]*cacheEntry // digests read this time and clean
	count atomic.Int64           // files found
}

// dirNode is one directory's share of the snapshot: an entry per name it
// listed, filled in by the jobs that observe them.
type dirNode struct {
	rel     string
	entries []dirEntry
}

// dirEntry is one name in a directory: a subdirectory, a file or link
// (ok), or nothing (skipped, vanished, or no content).
type dirEntry struct {
	name string
	// key orders the entries so that their paths come out in byte order:
	// the name, and for a directory the name and "/".
	key  string
	dir  *dirNode
	file FileState
	ok   bool
}

// dirHandle is an open directory shared by the jobs that observe its
// entries; the last to release it closes it.
type dirHandle struct {
	root *os.Root
	refs atomic.Int32
}

func (h *dirHandle) acquire() { h.refs.Add(1) }

func (h *dirHandle) release() {
	if h.refs.Add(-1) == 0 {
		h.root.Close()
	}
}

// run walks the workspace and returns its files in path order.
func (wk *walk) run() ([]FileState, error) {
	top := &dirNode{rel: "."}
	wk.wake = sync.NewCond(&wk.poolMu)
	wk.jobs = append(wk.jobs, func() error { return wk.dir(nil, nil, 0, top, nil, 0) })
	var wg sync.WaitGroup
	for range wk.w.workers - 1 {
		wg.Go(wk.worker)
	}
	wk.worker()
	wg.Wait()
	if err := context.Cause(wk.ctx); err != nil {
		return nil, err
	}
	files := make([]FileState, 0, wk.count.Load())
	return flatten(files, top), nil
}

// flatten appends the files of a directory tree in path order.
func flatten(files []FileState, n *dirNode) []FileState {
	cmp := func(a, b dirEntry) int { return strings.Compare(a.key, b.key) }
	if !slices.IsSortedFunc(n.entries, cmp) {
		slices.SortFunc(n.entries, cmp)
	}
	for i := range n.entries {
		switch e := &n.entries[i]; {
		case e.dir != nil:
			files = flatten(files, e.dir)
		case e.ok:
			files = append(files, e.file)
		}
	}
	return files
}

// spawn hands job to an idle worker, or, when every worker is busy, runs
// it at once: the walk goes depth first in each worker and shares work only
// with workers that have none. The first error cancels the walk; a job
// always runs, even then, so that it releases what it holds.
func (wk *walk) spawn(job func() error) {
	wk.poolMu.Lock()
	if wk.idle > len(wk.jobs) {
		wk.jobs = append(wk.jobs, job)
		wk.poolMu.Unlock()
		wk.wake.Signal()
		return
	}
	wk.poolMu.Unlock()
	if err := job(); err != nil {
		wk.cancel(err)
	}
}

// worker runs jobs until there are none left and no worker is running one
// (which could make more).
func (wk *walk) worker() {
	wk.poolMu.Lock()
	defer wk.poolMu.Unlock()
	for {
		switch {
		case len(wk.jobs) > 0:
			job := wk.jobs[len(wk.jobs)-1]
			wk.jobs = wk.jobs[:len(wk.jobs)-1]
			wk.busy++
			wk.poolMu.Unlock()
			err := job()
			if err != nil {
				wk.cancel(err)
			}
			wk.poolMu.Lock()
			wk.busy--
		case wk.done || wk.busy == 0:
			wk.done = true
			wk.wake.Broadcast()
			return
		default:
			wk.idle++
			wk.wake.Wait()
			wk.idle--
		}
	}
}

// pathErr names the workspace path an operation failed on.
func pathErr(op, rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: rel, Err: err}
}

// gone reports whether err says the path (or a parent) is no longer there.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func (wk *walk) skip(rel string, dir bool) bool {
	if path.Base(rel) == ".git" || rel == ".harness" || wk.w.skipPaths[rel] {
		return true
	}
	return wk.w.skipFunc != nil && wk.w.skipFunc(rel, dir)
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// dir opens and lists the directory n: the root when parent is nil, else
// entry i of the parent directory pn, which lstat described as fi. The
// directory opened must be that one, so a directory swapped for a link
// mid-walk is never followed: if it is not, the entry is looked at again.
// dir releases parent.
func (wk *walk) dir(parent *dirHandle, pn *dirNode, i int, n *dirNode, fi fs.FileInfo, attempt int) error {
	if parent != nil {
		defer parent.release()
	}
	if err := wk.ctx.Err(); err != nil {
		return err
	}
	var r *os.Root
	var err error
	if parent == nil {
		r, err = os.OpenRoot(wk.w.root)
	} else {
		if hook := wk.w.before; hook != nil {
			err = hook("list", n.rel)
		}
		if err == nil {
			r, err = parent.root.OpenRoot(pn.entries[i].name)
		}
	}
	if err != nil {
		if parent == nil {
			return pathErr("open", n.rel, err)
		}
		return wk.revisit(parent, pn, i, fi, attempt, err)
	}
	h := &dirHandle{root: r}
	h.acquire()
	defer h.release()
	if parent != nil {
		opened, err := r.Stat(".")
		if err != nil {
			return pathErr("stat", n.rel, err)
		}
		if !opened.IsDir() || !os.SameFile(fi, opened) {
			return wk.revisit(parent, pn, i, fi, attempt, nil)
		}
	}
	f, err := r.Open(".")
	if err != nil {
		return pathErr("open", n.rel, err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil && !(gone(err) && parent != nil) {
		return pathErr("readdir", n.rel, err)
	}
	slices.Sort(names)
	n.entries = make([]dirEntry, len(names))
	for j, name := range names {
		n.entries[j] = dirEntry{name: name, key: name}
	}
	for lo := fileChunk; lo < len(names); lo += fileChunk {
		hi := min(lo+fileChunk, len(names))
		h.acquire()
		wk.spawn(func() error {
			defer h.release()
			return wk.visitRange(h, n, lo, hi)
		})
	}
	return wk.visitRange(h, n, 0, min(fileChunk, len(names)))
}

// revisit looks again at entry i of pn, which lstat described as the
// directory fi and which could not be opened (err) or was not that
// directory when it was opened (err nil). If it still is that directory,
// err is the directory's own (a permission error, say).
func (wk *walk) revisit(h *dirHandle, pn *dirNode, i int, fi fs.FileInfo, attempt int, err error) error {
	e := &pn.entries[i]
	if err != nil && !gone(err) {
		if now, lerr := h.root.Lstat(e.name); lerr == nil && now.IsDir() && os.SameFile(fi, now) {
			return pathErr("open", join(pn.rel, e.name), err)
		}
	}
	e.dir, e.key = nil, e.name
	return wk.visit(h, pn, i, attempt+1)
}

// visitRange observes entries lo to hi of directory n.
func (wk *walk) visitRange(h *dirHandle, n *dirNode, lo, hi int) error {
	for i := lo; i < hi; i++ {
		if err := wk.ctx.Err(); err != nil {
			return err
		}
		if err := wk.visit(h, n, i, 0); err != nil {
			return err
		}
	}
	return nil
}

// visit observes entry i of directory n, whatever it now is.
func (wk *walk) visit(h *dirHandle, n *dirNode, i, attempt int) error {
	e := &n.entries[i]
	rel := join(n.rel, e.name)
	for ; attempt < maxAttempts; attempt++ {
		fi, err := h.root.Lstat(e.name)
		if gone(err) {
			return nil
		} else if err != nil {
			return pathErr("lstat", rel, err)
		}
		if wk.skip(rel, fi.IsDir()) {
			return nil
		}
		switch mode := fi.Mode(); {
		case mode.IsDir():
			child := &dirNode{rel: rel}
			e.dir, e.key = child, e.name+"/"
			h.acquire()
			next := attempt
			wk.spawn(func() error { return wk.dir(h, n, i, child, fi, next) })
			return nil
		case mode&fs.ModeSymlink != 0:
			target, err := h.root.Readlink(e.name)
			switch {
			case gone(err):
				return nil
			case errors.Is(err, syscall.EINVAL): // no longer a link
				continue
			case err != nil:
				return pathErr("readlink", rel, err)
			}
			sum := sha256.Sum256([]byte(target))
			e.file = FileState{Path: rel, Digest: hex.EncodeToString(sum[:]), Mode: mode, Size: int64(len(target)), Link: target}
		case mode.IsRegular():
			st, out, err := wk.regular(h, e.name, rel, fi)
			switch {
			case err != nil:
				return err
			case out == vanished:
				return nil
			case out == replaced:
				continue
			}
			e.file = st
		default:
			return nil // a pipe, socket or device: no content
		}
		e.ok = true
		wk.count.Add(1)
		return nil
	}
	return pathErr("observe", rel, errUnstable)
}

// openFlags opens a file to read it. O_NONBLOCK, where there are named
// pipes: should a pipe have replaced the file since lstat, opening it must
// not wait for a writer (the identity check then refuses it); it changes
// nothing for a regular file.
var openFlags = func() int {
	if runtime.GOOS == "windows" {
		return os.O_RDONLY
	}
	return os.O_RDONLY | syscall.O_NONBLOCK
}()

// outcome is what became of a path observed as a regular file.
type outcome int

const (
	found    outcome = iota
	vanished         // it is gone: not an error, it just is not there
	replaced         // it is no longer the file lstat described: look again
)

// regular observes the regular file name in directory h (rel in the
// workspace) that lstat described as fi: from the stat cache, or by
// reading it.
func (wk *walk) regular(h *dirHandle, name, rel string, fi fs.FileInfo) (FileState, outcome, error) {
	key := statKeyOf(fi)
	if c, ok := wk.w.cache[rel]; ok && c.key == key {
		c.seen = wk.gen // each path is visited by one job only
		return FileState{Path: rel, Digest: c.digest, Mode: fi.Mode(), Size: fi.Size()}, found, nil
	}
	var f *os.File
	var err error
	if hook := wk.w.before; hook != nil {
		err = hook("read", rel)
	}
	if err == nil {
		f, err = h.root.OpenFile(name, openFlags, 0)
	}
	if err != nil {
		if gone(err) {
			return FileState{}, vanished, nil
		}
		// Opening fails on a link that leads out of the directory: if the
		// file is no longer the one lstat saw, look again.
		if now, lerr := h.root.Lstat(name); lerr == nil && (!now.Mode().IsRegular() || !os.SameFile(fi, now)) {
			return FileState{}, replaced, nil
		}
		return FileState{}, 0, pathErr("open", rel, err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return FileState{}, 0, pathErr("stat", rel, err)
	}
	if !opened.Mode().IsRegular() || !os.SameFile(fi, opened) {
		return FileState{}, replaced, nil
	}
	digest, n, data, err := wk.read(f, fi.Size())
	if err != nil {
		if ctxErr := wk.ctx.Err(); ctxErr != nil {
			return FileState{}, 0, ctxErr
		}
		return FileState{}, 0, pathErr("read", rel, err)
	}
	if data != nil {
		if err := wk.put(digest, data); err != nil {
			return FileState{}, 0, pathErr("keep", rel, err)
		}
	}
	// Remember the digest only if the file did not change while it was read
	// (it read as many bytes as lstat said) and its times are strictly
	// older than the snapshot time (it is not racily clean).
	if n == key.size && key.mtime < wk.since && key.ctime < wk.since {
		wk.mu.Lock()
		wk.fresh[rel] = &cacheEntry{key: key, digest: digest}
		wk.mu.Unlock()
	}
	return FileState{Path: rel, Digest: digest, Mode: fi.Mode(), Size: n}, found, nil
}

var readBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

var sha256s = sync.Pool{New: func() any { return sha256.New() }}

// read hashes the file's content, checking for cancellation between
// chunks. When blobs are kept and the content fits the cap, it also
// returns the content.
func (wk *walk) read(f *os.File, size int64) (digest string, n int64, data []byte, err error) {
	h := sha256s.Get().(hash.Hash)
	defer sha256s.Put(h)
	h.Reset()
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	keep := wk.w.blobs != nil && size <= wk.w.blobCap
	if keep {
		data = make([]byte, 0, size)
	}
	for {
		if err := wk.ctx.Err(); err != nil {
			return "", 0, nil, err
		}
		m, rerr := f.Read(buf)
		if m > 0 {
			h.Write(buf[:m])
			n += int64(m)
			if keep {
				if n > wk.w.blobCap {
					keep, data = false, nil
				} else {
					data = append(data, buf[:m]...)
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return "", 0, nil, rerr
		}
	}
	return hex.EncodeToString(h.Sum(nil)), n, data, nil
}

// put keeps data in the workspace's Blobs and checks the digest it gives.
func (wk *walk) put(digest string, data []byte) error {
	wk.w.putMu.Lock()
	defer wk.w.putMu.Unlock()
	got, err := wk.w.blobs.PutBlob(wk.ctx, data)
	if err != nil {
		return err
	}
	if got != digest {
		return fmt.Errorf("blob store returned digest %s for content with sha256 %s", got, digest)
	}
	return nil
}

// statKeyOf is the stat cache key of a file: size and mtime from fi, and
// ctime and inode from the platform's stat record when it has them.
func statKeyOf(fi fs.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	k.ino, k.ctime = sysStat(fi.Sys())
	return k
}

// sysFields is where a platform's stat record keeps the inode and ctime:
// the index of the Ino field, and of the ctime timespec field (Ctim on
// Linux and most unixes, Ctimespec on macOS and FreeBSD) with its Sec and
// Nsec fields. -1 where there is none.
type sysFields struct{ ino, ctim, sec, nsec int }

var sysLayouts sync.Map // reflect.Type → sysFields

// sysStat reads the inode and ctime (ns) out of a FileInfo.Sys() value by
// field name, so one file serves every platform without build tags: zero
// where the record has no such fields (Windows).
func sysStat(sys any) (ino uint64, ctime int64) {
	v := reflect.ValueOf(sys)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, 0
	}
	v = v.Elem()
	l, ok := sysLayouts.Load(v.Type())
	if !ok {
		l = layoutOf(v.Type())
		sysLayouts.Store(v.Type(), l)
	}
	f := l.(sysFields)
	if f.ino >= 0 {
		ino = uintOf(v.Field(f.ino))
	}
	if f.ctim >= 0 {
		ts := v.Field(f.ctim)
		ctime = intOf(ts.Field(f.sec))*int64(time.Second) + intOf(ts.Field(f.nsec))
	}
	return ino, ctime
}

func layoutOf(t reflect.Type) sysFields {
	f := sysFields{ino: -1, ctim: -1, sec: -1, nsec: -1}
	isInt := func(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Uint64 }
	if sf, ok := t.FieldByName("Ino"); ok && len(sf.Index) == 1 && isInt(sf.Type.Kind()) {
		f.ino = sf.Index[0]
	}
	for _, name := range []string{"Ctim", "Ctimespec"} {
		sf, ok := t.FieldByName(name)
		if !ok || len(sf.Index) != 1 || sf.Type.Kind() != reflect.Struct {
			continue
		}
		sec, ok1 := sf.Type.FieldByName("Sec")
		nsec, ok2 := sf.Type.FieldByName("Nsec")
		if ok1 && ok2 && len(sec.Index) == 1 && len(nsec.Index) == 1 && isInt(sec.Type.Kind()) && isInt(nsec.Type.Kind()) {
			f.ctim, f.sec, f.nsec = sf.Index[0], sec.Index[0], nsec.Index[0]
			break
		}
	}
	return f
}

func uintOf(v reflect.Value) uint64 {
	if v.CanUint() {
		return v.Uint()
	}
	return uint64(v.Int())
}

func intOf(v reflect.Value) int64 {
	if v.CanInt() {
		return v.Int()
	}
	return int64(v.Uint())
}
