package action

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// The reading a Workspace keeps is a tree of directory records, each
// immutable once built: an observation builds new records for the
// directories where something changed and shares the rest with the last
// reading. So a failed observation leaves the last reading as it was, and
// an observation that found nothing changed returns the last snapshot
// itself.

// The kinds of entry a directory lists.
const (
	kindNew   byte = 0   // listed, not looked at yet
	kindFile  byte = 'f' // a regular file
	kindLink  byte = 'l' // a symbolic link
	kindDir   byte = 'd' // a directory
	kindOther byte = 'o' // a pipe, socket or device: no content
	kindGone  byte = 'x' // vanished while it was looked at
)

// entry is one name in a directory, as it was last looked at.
type entry struct {
	// FileState is what a snapshot lists for a file or link in scope.
	FileState
	name  string
	kind  byte
	skip  bool // out of scope
	clean bool // a file's or link's digest holds while key does (see the racy rule)
	kept  bool // a file's bytes are kept in the Blobs
	multi bool // a regular file with more than one hard link
	key   statKey
	dir   *dirRec // a directory in scope: its record
}

// same reports whether two readings of an entry agree on everything but
// the directory record.
func (e *entry) same(o *entry) bool {
	return e.kind == o.kind && e.skip == o.skip && e.clean == o.clean && e.kept == o.kept && e.multi == o.multi &&
		e.key == o.key && e.FileState == o.FileState
}

// dirRec is a directory as it was last listed.
type dirRec struct {
	key   statKey // the directory's own stat record when it was listed
	clean bool    // the listing holds while key does (see the racy rule)
	watch uint64  // the feed generation watching it; 0: none
	ents  []entry // sorted by name
	// Derived from the above by finish.
	order   []int32  // ents in path order, when that is not name order
	rechk   []int32  // entries to look at again whatever the feed says
	recheck bool     // this directory or something under it must be looked at
	files   int      // files and links in scope under it
	sum     [32]byte // the digest of what is in scope under it (see tree.go)
	// unhashed: a record read from the store, whose files and sum wait
	// for its subdirectories' records (see assemble).
	unhashed bool
	// named is Workspace.Named's last answer for this record, kept while
	// a reading shares it; guarded by the Workspace's mu.
	named *namedAnswer
}

// finish computes the derived fields of r and its digest; epoch is the
// feed generation whose watches vouch for a directory.
func (r *dirRec) finish(epoch uint64) {
	r.derive(epoch)
	r.digest()
}

// derive computes the derived fields of r but its digest.
func (r *dirRec) derive(epoch uint64) {
	r.order, r.rechk, r.files = nil, nil, 0
	ordered := true
	for i := range r.ents {
		e := &r.ents[i]
		if i > 0 && pathKeyCompare(&r.ents[i-1], e) > 0 {
			ordered = false
		}
		if e.skip {
			continue
		}
		switch e.kind {
		case kindFile, kindLink:
			r.files++
			if !e.clean || e.multi {
				r.rechk = append(r.rechk, int32(i))
			}
		case kindOther:
			r.files++ // looked at anew whenever its directory is
		case kindDir:
			if e.dir == nil {
				r.rechk = append(r.rechk, int32(i))
				continue
			}
			r.files += e.dir.files
			if e.dir.recheck {
				r.rechk = append(r.rechk, int32(i))
			}
		}
	}
	if !ordered {
		r.order = make([]int32, len(r.ents))
		for i := range r.order {
			r.order[i] = int32(i)
		}
		slices.SortFunc(r.order, func(a, b int32) int { return pathKeyCompare(&r.ents[a], &r.ents[b]) })
	}
	r.recheck = !r.clean || r.watch == 0 || r.watch != epoch || len(r.rechk) > 0
}

// pathKeyCompare orders entries as their paths sort: a directory's name
// followed by "/", anything else's name alone.
func pathKeyCompare(a, b *entry) int {
	an, bn := a.name, b.name
	n := min(len(an), len(bn))
	if c := strings.Compare(an[:n], bn[:n]); c != 0 {
		return c
	}
	next := func(e *entry, name string) int {
		if len(name) > n {
			return int(name[n])
		}
		if e.kind == kindDir {
			return '/'
		}
		return -1 // the name ends here
	}
	ac, bc := next(a, an), next(b, bn)
	switch {
	case ac < bc:
		return -1
	case ac > bc:
		return 1
	case ac == -1 || ac == '/' && len(an) == n && len(bn) == n:
		return 0
	}
	// One name continues where the other has its "/": compare the rest.
	return strings.Compare(pathKey(a), pathKey(b))
}

func pathKey(e *entry) string {
	if e.kind == kindDir {
		return e.name + "/"
	}
	return e.name
}

// flatten appends the files of the tree in path order.
func (r *dirRec) flatten(files []FileState) []FileState {
	emit := func(e *entry) {
		switch {
		case e.skip:
		case e.kind == kindFile || e.kind == kindLink || e.kind == kindOther:
			files = append(files, e.FileState)
		case e.kind == kindDir && e.dir != nil:
			files = e.dir.flatten(files)
		}
	}
	if r.order == nil {
		for i := range r.ents {
			emit(&r.ents[i])
		}
	} else {
		for _, i := range r.order {
			emit(&r.ents[i])
		}
	}
	return files
}

// find returns the index of the entry called name, or -1.
func (r *dirRec) find(name string) int {
	i, ok := slices.BinarySearchFunc(r.ents, name, func(e entry, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return -1
	}
	return i
}

// isDir reports whether the reading has a directory at rel.
func (r *dirRec) isDir(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if r == nil {
			return false
		}
		i := r.find(part)
		if i < 0 || r.ents[i].kind != kindDir {
			return false
		}
		r = r.ents[i].dir
	}
	return true
}

// change is what the feed said happened to a path.
type change uint8

const (
	chCreate change = 1 << iota
	chWrite
	chRemove
	chRename
	chChmod
	chBelow // something under the directory changed
)

// dirMarks is what the feed said about one directory's entries.
type dirMarks struct {
	list  bool              // list it again: a name came, went or moved
	names map[string]change // its entries to look at again
}

// markEvents turns the feed's events into marks by directory. It reports
// false when the events say the watches themselves are stale: the root,
// or a directory the reading knows, was moved or removed from under its
// watch's path.
func markEvents(tree *dirRec, events map[string]change) (map[string]*dirMarks, bool) {
	marks := map[string]*dirMarks{}
	get := func(rel string) *dirMarks {
		m := marks[rel]
		if m == nil {
			m = &dirMarks{names: map[string]change{}}
			marks[rel] = m
		}
		return m
	}
	for rel, c := range events {
		if rel == "." {
			if c&(chRemove|chRename) != 0 {
				return nil, false
			}
			get(".").list = true
			continue
		}
		if c&chRename != 0 && tree.isDir(rel) {
			return nil, false
		}
		parent, name := splitRel(rel)
		m := get(parent)
		m.names[name] |= c
		if c&(chCreate|chRemove|chRename) != 0 {
			m.list = true
		}
		for child := parent; child != "."; {
			gp, n := splitRel(child)
			get(gp).names[n] |= chBelow
			child = gp
		}
	}
	return marks, true
}

// splitRel splits a path relative to the root into its directory ("." at
// the top) and its last name.
func splitRel(rel string) (string, string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// maxAttempts bounds how often a path that keeps changing type or identity
// under the walk is looked at again before the observation gives up.
const maxAttempts = 4

// errUnstable: a path kept changing while it was being observed.
var errUnstable = errors.New("kept changing while being observed")

// fileChunk is how many entries of one directory one job observes.
const fileChunk = 256

// walk is one observation in progress. Directories are opened one name at
// a time relative to their parent's descriptor, never through a link, so a
// path is resolved once per directory, not once per file, and nothing is
// reached through a link.
type walk struct {
	w      *Workspace
	ctx    context.Context
	cancel context.CancelCauseFunc
	since  int64 // the snapshot time: ns since the epoch
	// settleBy is when the walk stops waiting for the times of files it
	// knows by their stat record alone to settle (see unread).
	settleBy time.Time
	// all: look at every entry. Otherwise the feed vouches for the last
	// reading, and marks say what it reported.
	all   bool
	marks map[string]*dirMarks
	load  bool // look for records kept by an earlier process
	feed  *feed
	epoch uint64
	// ownIDs are the harness's own files, never observed; storeIDs the
	// store's directories, never entered, as their paths resolve during
	// this walk: resolved the first time a directory is looked at, so a
	// walk the feed sends down known directories only resolves nothing.
	ownIDs    []sysStat
	storeOnce sync.Once
	storeIDs  []sysStat
	rootSt    sysStat
	rootAt    *sysStat // the root's path as this observation found it, when it did (see rootMoved)

	feedMu  sync.Mutex // guards feedErr
	feedErr error      // the first watch that could not be added

	// alone: the walk runs every job on the goroutine that makes it, until
	// it has looked at shareAfter entries (looked counts them); then it
	// shares its jobs with workers. A walk the feed sends down a few paths
	// then costs no goroutine, no wake-up and no hand-over, and one that
	// turns out big (a new directory tree, a checkout) is still shared.
	alone  atomic.Bool
	looked atomic.Int64

	// The work pool: jobs waiting for an idle worker.
	poolMu  sync.Mutex // guards jobs, idle, busy, started and done; wake's lock
	wake    *sync.Cond
	jobs    []func() error
	idle    int // workers waiting for a job
	busy    int // workers running a job
	started int // workers started, this goroutine's included
	done    bool
	wg      sync.WaitGroup // the workers started by spawn

	// What assemble found for the store: records to keep, and directories
	// whose records to drop.
	puts    []*putRec
	forgets []string
}

type putRec struct {
	rel string
	rec *dirRec
}

// node is one directory being observed.
type node struct {
	rel   string
	basis *dirRec // the last reading of it, if any
	full  bool    // look at every entry: nothing vouches for the last reading
	st    sysStat // its own stat record, as opened
	clean bool
	watch uint64
	ents  []entry
	own   bool // ents is this node's (else it is basis.ents, read-only)
	// listed: ents is a new listing (else the last reading's).
	listed bool
	// changed: the record differs from basis; dirty: in what the store
	// keeps.
	changed, dirty atomic.Bool
	dropped        []entry // directories the listing no longer has

	mu   sync.Mutex // guards kids
	kids []*kid
}

// kid is a directory entry of a node observed by a job of its own.
type kid struct {
	i    int
	name string
	old  entry  // the entry as the node has it
	n    *node  // the directory being observed; nil once it is not one
	ent  *entry // what the entry turned out to be, when it is not the node's
}

// set records the new reading of entry i, taking a copy of the listing
// first if the node does not own it. Only one job writes a node's entries
// at a time (several, of disjoint ranges, once the node owns them).
func (n *node) set(i int, e *entry) {
	if n.ents[i].same(e) && n.ents[i].dir == e.dir {
		return
	}
	if !n.own {
		n.ents = slices.Clone(n.ents)
		n.own = true
	}
	n.ents[i] = *e
	n.changed.Store(true)
	n.dirty.Store(true)
}

// dirHandle is an open directory shared by the jobs that observe its
// entries; the last to release it closes it.
type dirHandle struct {
	d    dirFD
	kept bool // d is the root the Workspace keeps (see openRoot): never closed here
	refs atomic.Int32
}

func (h *dirHandle) acquire() { h.refs.Add(1) }

func (h *dirHandle) release() {
	if h.refs.Add(-1) == 0 && !h.kept {
		h.d.close()
	}
}

// run walks the workspace and returns the new reading.
func (wk *walk) run() (*dirRec, error) {
	top := &node{rel: ".", full: wk.all}
	if t := wk.w.tree; t != nil {
		top.basis = t
	}
	wk.wake = sync.NewCond(&wk.poolMu)
	wk.started, wk.busy = 1, 1
	wk.worker(func() error { return wk.dir(nil, nil, top, nil, 0) })
	wk.wg.Wait()
	if err := context.Cause(wk.ctx); err != nil {
		return nil, err
	}
	return wk.assemble(top), nil
}

// shareAfter is how many entries a walk that starts alone (see
// walk.alone) looks at before it shares its jobs with workers: a handful
// of reads and listings costs less than waking a worker does.
const shareAfter = 32

// spawn runs job at once while the walk is alone (see walk.alone); else
// it hands job to an idle worker; or, while fewer than the Workspace's
// workers run, to a new one; or, when every worker is busy, runs it at
// once: the walk goes depth first in each worker and shares work only
// with workers that have none. So an observation that looks at a few
// paths (the feed's) runs on the calling goroutine alone. The first error
// cancels the walk; a job always runs, even then, so that it releases
// what it holds.
func (wk *walk) spawn(job func() error) {
	if wk.alone.Load() {
		if wk.looked.Load() < shareAfter {
			if err := job(); err != nil {
				wk.cancel(err)
			}
			return
		}
		wk.alone.Store(false)
	}
	wk.poolMu.Lock()
	if wk.idle > len(wk.jobs) {
		wk.jobs = append(wk.jobs, job)
		wk.poolMu.Unlock()
		wk.wake.Signal()
		return
	}
	if wk.started < wk.w.workers {
		wk.started++
		wk.busy++
		wk.poolMu.Unlock()
		wk.w.started.Add(1)
		wk.wg.Go(func() { wk.worker(job) })
		return
	}
	wk.poolMu.Unlock()
	if err := job(); err != nil {
		wk.cancel(err)
	}
}

// later holds the last job a loop over a directory's entries made, so
// that the loop's own goroutine runs it when the loop is done (see
// flush): a path the feed reported, one directory below the next, is
// then walked down by one goroutine, with no hand-over at each level.
type later struct {
	wk  *walk
	job func() error
}

// add spawns the job held before, and holds job.
func (l *later) add(job func() error) {
	if l.job != nil {
		l.wk.spawn(l.job)
	}
	l.job = job
}

// flush runs the job held, if any.
func (l *later) flush() error {
	if l.job == nil {
		return nil
	}
	job := l.job
	l.job = nil
	return job()
}

// worker runs first (a job counted busy by whoever started the worker),
// then jobs until there are none left and no worker is running one (which
// could make more).
func (wk *walk) worker(first func() error) {
	if err := first(); err != nil {
		wk.cancel(err)
	}
	wk.poolMu.Lock()
	defer wk.poolMu.Unlock()
	wk.busy--
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

// skip reports whether the entry rel, described by st, is out of scope.
func (wk *walk) skip(rel, name string, st *sysStat) bool {
	dir := st.mode.IsDir()
	if wk.w.skipPaths[rel] {
		return true
	}
	switch g, sub, top := guardOf(rel); g {
	case guardGit:
		if gitWorkingData(sub, dir) && (top || sub != "HEAD") {
			return true
		}
	case guardStore:
		if storeOwn(sub) {
			return true
		}
	}
	// A directory named .harness is entered by name, even when it is the
	// store itself: what is not the store's own there is observed (see
	// guard.go). Any other path to the store is left out whole.
	if dir && name != ".harness" {
		wk.storeOnce.Do(func() { wk.storeIDs = wk.w.storeIdentities() })
		for i := range wk.storeIDs {
			if sameFile(wk.storeIDs[i], *st) {
				return true
			}
		}
	}
	if st.mode.IsRegular() {
		for i := range wk.ownIDs {
			if sameFile(wk.ownIDs[i], *st) {
				return true
			}
		}
	}
	return wk.w.skipFunc != nil && wk.w.skipFunc(rel, dir)
}

// watch adds the feed's watch on the directory rel, open as d, or records
// why it could not be added: the feed then stops after this observation.
func (wk *walk) watch(rel string, d dirFD) uint64 {
	var err error
	if hook := wk.w.watchHook; hook != nil {
		err = hook(rel)
	}
	if err == nil {
		err = wk.feed.add(rel, d)
	}
	if err == nil {
		return wk.epoch
	}
	if errors.Is(err, syscall.ENOSPC) {
		err = fmt.Errorf("%w (the kernel's limit on inotify watches, fs.inotify.max_user_watches, is reached)", err)
	}
	wk.feedMu.Lock()
	if wk.feedErr == nil {
		wk.feedErr = fmt.Errorf("change feed: watch %s: %w", rel, err)
	}
	wk.feedMu.Unlock()
	return 0
}

// dir opens, lists and observes the directory n: the root when parent is
// nil, else the entry k of the directory parent, which lstat described as
// expect (nil: not looked at this time). The directory opened must be that
// one, so a directory swapped for a link mid-walk is never followed: if it
// is not, the entry is looked at again. dir releases parent.
func (wk *walk) dir(parent *dirHandle, k *kid, n *node, expect *sysStat, attempt int) error {
	if parent != nil {
		defer parent.release()
	}
	if err := wk.ctx.Err(); err != nil {
		return err
	}
	var d dirFD
	var err error
	var rootSt sysStat
	kept := false
	if parent == nil {
		d, rootSt, kept, err = wk.w.openRoot(wk.rootAt)
		if err != nil {
			return pathErr("open", n.rel, err)
		}
	} else {
		if hook := wk.w.before; hook != nil {
			err = hook("list", n.rel)
		}
		if err == nil {
			d, err = parent.d.openDir(k.name)
		}
		if err != nil {
			return wk.revisit(parent, k, expect, attempt, err)
		}
	}
	h := &dirHandle{d: d, kept: kept}
	h.acquire()
	defer h.release()
	st := rootSt
	if b := n.basis; parent != nil && wk.quiet(n, expect) {
		// The feed vouches for this directory: nothing was reported of
		// it or in it but below, its listing was clean, and it has been
		// watched since. Its stat record is as the last reading kept it
		// (any change to it — a name, its mode, its times — raises an
		// event) — if it is still that directory: one swapped in under
		// its name since the feed was read (its events not read yet) is
		// another directory, looked at in full.
		if st, err = d.stat(); err == nil && st.key.ino == b.key.ino && st.key.dev == b.key.dev {
			st = trustedDir(b.key)
		}
	} else if parent != nil {
		st, err = d.stat()
	}
	if err != nil {
		return pathErr("stat", n.rel, err)
	}
	if parent == nil {
		wk.rootSt = st
	} else if expect != nil && (!st.mode.IsDir() || !sameFile(*expect, st)) {
		return wk.revisit(parent, k, expect, attempt, nil)
	}
	n.st = st
	if wk.load && n.basis == nil {
		n.basis = wk.w.loadRec(wk.ctx, n.rel)
	}
	b := n.basis
	if b != nil && (b.key.ino != st.key.ino || b.key.dev != st.key.dev) {
		n.full = true // another directory under the same name
	}
	if b != nil && !n.full {
		n.watch = b.watch
	}
	if wk.feed != nil && n.full && sameDevice(wk.rootSt, st) {
		if b != nil && b.watch == wk.epoch && b.key.ino == st.key.ino && b.key.dev == st.key.dev && !wk.rewatch(n.rel) {
			n.watch = b.watch
		} else {
			n.watch = wk.watch(n.rel, d) // before listing: a change after it is reported
			// A name made after the stat above and before the watch
			// raised no event, and the stat taken before it may still
			// equal the kept record: the kept listing would be used and
			// the feed would vouch for it from then on. Stat again, now
			// that any later change is reported.
			if n.watch == wk.epoch {
				if st, err = d.stat(); err != nil {
					return pathErr("stat", n.rel, err)
				}
				if parent == nil {
					wk.rootSt = st
				}
				n.st = st
			}
		}
	}
	n.clean = st.key.mtime < wk.since && st.key.ctime < wk.since
	marks := wk.marks[n.rel]
	if b == nil || !b.clean || b.key != st.key || (marks != nil && marks.list) {
		if kept {
			if err := d.rewind(); err != nil {
				return pathErr("readdir", n.rel, err)
			}
		}
		if err := wk.list(d, n, parent != nil); err != nil {
			return err
		}
	} else {
		n.ents = b.ents
	}
	if b == nil || b.key != st.key || b.clean != n.clean {
		n.changed.Store(true)
		n.dirty.Store(true)
	}
	if b == nil || b.watch != n.watch {
		n.changed.Store(true)
	}
	if n.full {
		if len(n.ents) > shareAfter {
			wk.alone.Store(false) // a directory nothing vouches for, and big: share it
		}
		for lo := fileChunk; lo < len(n.ents); lo += fileChunk {
			if !n.own {
				n.ents = slices.Clone(n.ents)
				n.own = true
			}
			hi := min(lo+fileChunk, len(n.ents))
			h.acquire()
			wk.spawn(func() error {
				defer h.release()
				return wk.visitRange(h, n, lo, hi)
			})
		}
		return wk.visitRange(h, n, 0, min(fileChunk, len(n.ents)))
	}
	return wk.visitMarked(h, n, marks)
}

// quiet reports whether the feed vouches for the directory n, reached
// through its parent's listing as the last reading knew it (expect nil):
// the walk goes down to it for something below, nothing was reported of
// it or of its names, its last listing was clean, and the feed's current
// watches have watched it since.
func (wk *walk) quiet(n *node, expect *sysStat) bool {
	b := n.basis
	if wk.all || wk.feed == nil || expect != nil || n.full || b == nil || b.unhashed || !b.clean || b.watch != wk.epoch {
		return false
	}
	m := wk.marks[n.rel]
	return m == nil || !m.list
}

// rewatch reports whether the feed said the directory rel itself came,
// went or moved: its watch must be made again.
func (wk *walk) rewatch(rel string) bool {
	if rel == "." {
		return false
	}
	parent, name := splitRel(rel)
	m := wk.marks[parent]
	return m != nil && m.names[name]&(chCreate|chRemove|chRename) != 0
}

// list reads the directory's names into n.ents, keeping what the last
// reading knew of each name still there.
//
// A listing that holds exactly the names the last one held (a directory
// listed again because its listing was racily clean) keeps the last
// reading's entries as they are, shared, as a directory not listed again
// does: nothing is copied, and the entries are looked at as after any
// new listing (see visitMarked).
func (wk *walk) list(d dirFD, n *node, sub bool) error {
	var old []entry
	if n.basis != nil {
		old = n.basis.ents
	}
	names, same, err := d.namesLike(old)
	if err != nil && !(gone(err) && sub) {
		return pathErr("readdir", n.rel, err)
	}
	if same {
		n.ents, n.own, n.listed = old, false, true
		return nil
	}
	slices.Sort(names)
	ents := make([]entry, 0, len(names))
	i := 0
	for _, name := range names {
		for i < len(old) && old[i].name < name {
			if old[i].kind == kindDir {
				n.dropped = append(n.dropped, old[i])
			}
			i++
		}
		if i < len(old) && old[i].name == name {
			ents = append(ents, old[i])
			i++
			continue
		}
		ents = append(ents, entry{name: name, kind: kindNew})
	}
	for ; i < len(old); i++ {
		if old[i].kind == kindDir {
			n.dropped = append(n.dropped, old[i])
		}
	}
	moved := len(ents) != len(old) || len(n.dropped) > 0
	for j := 0; !moved && j < len(ents); j++ {
		moved = ents[j].name != old[j].name
	}
	if moved {
		n.changed.Store(true)
		n.dirty.Store(true)
	}
	n.ents, n.own, n.listed = ents, true, true
	return nil
}

// visitRange observes entries lo to hi of directory n, every one.
func (wk *walk) visitRange(h *dirHandle, n *node, lo, hi int) error {
	l := later{wk: wk}
	defer l.flush() // after an error, still run (and release) what is held
	for i := lo; i < hi; i++ {
		if err := wk.ctx.Err(); err != nil {
			return err
		}
		if err := wk.look(h, n, i, true, 0, &l); err != nil {
			return err
		}
	}
	return l.flush()
}

// visitMarked observes what the feed cannot vouch for in directory n: the
// entries it reported, the entries new in the listing, and those the last
// reading could not vouch for itself.
func (wk *walk) visitMarked(h *dirHandle, n *node, marks *dirMarks) error {
	var todo []int32
	if b := n.basis; b != nil && !n.listed {
		todo = append(todo, b.rechk...)
	} else {
		// A new listing: look at what is new in it, and at what the last
		// reading flagged.
		for i := range n.ents {
			e := &n.ents[i]
			if e.kind == kindNew || (!e.skip && (e.kind == kindFile || e.kind == kindLink) && (!e.clean || e.multi)) ||
				(!e.skip && e.kind == kindDir && (e.dir == nil || e.dir.recheck)) {
				todo = append(todo, int32(i))
			}
		}
	}
	var marked map[int32]change
	if marks != nil {
		marked = make(map[int32]change, len(marks.names))
		for name, c := range marks.names {
			if i := findEntry(n.ents, name); i >= 0 {
				marked[int32(i)] |= c
				todo = append(todo, int32(i))
			}
		}
	}
	slices.Sort(todo)
	todo = slices.Compact(todo)
	l := later{wk: wk}
	defer l.flush() // after an error, still run (and release) what is held
	for _, i := range todo {
		if err := wk.ctx.Err(); err != nil {
			return err
		}
		if err := wk.look(h, n, int(i), false, marked[i], &l); err != nil {
			return err
		}
	}
	return l.flush()
}

func findEntry(ents []entry, name string) int {
	i, ok := slices.BinarySearchFunc(ents, name, func(e entry, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return -1
	}
	return i
}

// look observes entry i of directory n. full: every entry is looked at
// (stat'ed); otherwise c is what the feed said of it. A directory's
// observation is a job, given to l.
func (wk *walk) look(h *dirHandle, n *node, i int, full bool, c change, l *later) error {
	old := n.ents[i]
	rel := old.Path // kept with every entry looked at before
	if rel == "" {
		rel = join(n.rel, old.name)
	}
	wk.looked.Add(1)
	if !full && old.kind == kindDir && !old.skip && c&^chBelow == 0 {
		// Nothing happened to the directory itself: go down into it as
		// it was, and let its own reading say what to look at.
		child := &node{rel: rel, basis: old.dir, full: old.dir == nil || old.dir.watch != wk.epoch}
		k := &kid{i: i, name: old.name, old: old, n: child}
		n.addKid(k)
		h.acquire()
		l.add(func() error { return wk.dir(h, k, child, nil, 0) })
		return nil
	}
	// What the feed reported is read again, whatever its stat record says.
	force := c&(chCreate|chWrite|chRemove|chRename|chChmod) != 0
	e, child, st, err := wk.process(h, rel, old.name, &old, full || c&(chCreate|chRemove|chRename) != 0, force, 0)
	if err != nil {
		return err
	}
	if child != nil {
		e.dir = old.dir
		k := &kid{i: i, name: old.name, old: e, n: child}
		n.addKid(k)
		n.set(i, &e)
		h.acquire()
		expect := st // only a directory's stat record goes to the heap
		l.add(func() error { return wk.dir(h, k, child, &expect, 0) })
		return nil
	}
	n.set(i, &e)
	return nil
}

func (n *node) addKid(k *kid) {
	n.mu.Lock()
	n.kids = append(n.kids, k)
	n.mu.Unlock()
}

// revisit looks again at the entry k of the directory h, which lstat
// described as the directory expect and which could not be opened (err)
// or was not that directory when it was opened (err nil). If it still is
// that directory, err is the directory's own (a permission error, say).
// What the entry is now goes to k.
func (wk *walk) revisit(h *dirHandle, k *kid, expect *sysStat, attempt int, err error) error {
	rel := k.n.rel
	if err != nil && !gone(err) && !errLoop(err) {
		if now, lerr := h.d.lstat(k.name); lerr == nil && now.mode.IsDir() && (expect == nil || sameFile(*expect, now)) {
			return pathErr("open", rel, err)
		}
	}
	e, child, st, perr := wk.process(h, rel, k.name, &k.old, true, false, attempt+1)
	if perr != nil {
		return perr
	}
	k.ent = &e
	k.n = child
	if child != nil {
		h.acquire()
		return wk.dir(h, k, child, &st, attempt+1)
	}
	return nil
}

// process stats the entry name of directory h (rel in the workspace) and
// observes it, comparing with old, the last reading of it. For a
// directory it returns the node that observes it and its stat record; the
// caller observes it. fullBelow: nothing vouches for what a directory
// holds; force: read a file or link even if its stat record is unchanged.
func (wk *walk) process(h *dirHandle, rel, name string, old *entry, fullBelow, force bool, attempt int) (entry, *node, sysStat, error) {
	for ; attempt < maxAttempts; attempt++ {
		st, err := h.d.lstat(name)
		if gone(err) {
			return entry{name: name, kind: kindGone}, nil, st, nil
		} else if err != nil {
			return entry{}, nil, st, pathErr("lstat", rel, err)
		}
		e := entry{name: name, key: st.key, FileState: FileState{Path: rel, Mode: st.mode}}
		mode := st.mode
		switch {
		case mode.IsDir():
			e.kind = kindDir
		case mode&fs.ModeSymlink != 0:
			e.kind = kindLink
		case mode.IsRegular():
			e.kind = kindFile
			e.multi = st.nlink > 1
		default:
			e.kind = kindOther
		}
		if wk.skip(rel, name, &st) {
			// Nothing of a skipped entry is kept but that it is one: its
			// times (a .git directory's change with every git command) are
			// no change of the workspace.
			e.skip, e.key, e.multi = true, statKey{}, false
			e.FileState = FileState{Path: rel}
			return e, nil, st, nil
		}
		switch e.kind {
		case kindDir:
			var basis *dirRec
			if old.kind == kindDir && !old.skip {
				basis = old.dir
			}
			full := fullBelow || basis == nil || basis.watch != wk.epoch || old.key.ino != st.key.ino || old.key.dev != st.key.dev
			e.FileState = FileState{Path: rel}
			// A directory's entry keeps only its identity: its times and
			// size are its own record's (they move whenever a name in it
			// comes or goes), and in its parent's they would make the
			// parent's record change with them.
			e.key = statKey{ino: st.key.ino, dev: st.key.dev}
			return e, &node{rel: rel, basis: basis, full: full}, st, nil
		case kindLink:
			if !force && old.kind == kindLink && !old.skip && old.clean && old.key == st.key {
				e.Digest, e.Link, e.Size, e.clean = old.Digest, old.Link, old.Size, true
				return e, nil, st, nil
			}
			target, err := h.d.readlink(name)
			switch {
			case gone(err):
				return entry{name: name, kind: kindGone}, nil, st, nil
			case errNotLink(err): // no longer a link
				continue
			case err != nil:
				return entry{}, nil, st, pathErr("readlink", rel, err)
			}
			sum := sha256.Sum256([]byte(target))
			e.Digest, e.Link, e.Size = hex.EncodeToString(sum[:]), target, int64(len(target))
			e.clean = st.key.mtime < wk.since && st.key.ctime < wk.since
			return e, nil, st, nil
		case kindFile:
			out, err := wk.regular(h, name, rel, &st, old, &e, force)
			switch {
			case err != nil:
				return entry{}, nil, st, err
			case out == vanished:
				return entry{name: name, kind: kindGone}, nil, st, nil
			case out == replaced:
				continue
			}
			return e, nil, st, nil
		default:
			// No content, but there: a FIFO a command left where a file
			// was blocks whoever opens it next.
			e.FileState = FileState{Path: rel, Mode: st.mode, Digest: SpecialDigest(st.mode)}
			return e, nil, st, nil
		}
	}
	return entry{}, nil, sysStat{}, pathErr("observe", rel, errUnstable)
}

// outcome is what became of a path observed as a regular file.
type outcome int

const (
	found    outcome = iota
	vanished         // it is gone: not an error, it just is not there
	replaced         // it is no longer the file lstat described: look again
)

// regular observes the regular file name in directory h (rel in the
// workspace) that lstat described as st, into e: from the last reading
// old (unless force), or by reading it.
func (wk *walk) regular(h *dirHandle, name, rel string, st *sysStat, old, e *entry, force bool) (outcome, error) {
	w := wk.w
	huge := st.key.size > w.hashLimit
	keep := w.blobs != nil && st.key.size <= w.blobCap && !huge
	// A stat digest kept from a reading under a lower limit is not kept
	// once the file is one this Workspace hashes.
	if !force && old.kind == kindFile && !old.skip && old.clean && old.key == st.key && (huge || !isStatDigest(old.Digest)) {
		kept := old.kept
		if keep && !kept {
			if has, ok := w.blobs.(BlobChecker); ok {
				kept, _ = has.HasBlob(wk.ctx, old.Digest)
			}
		}
		if !keep || kept {
			e.Digest, e.Size, e.clean, e.kept = old.Digest, old.Size, true, kept
			return found, nil
		}
	}
	if huge {
		return wk.unread(h, name, rel, st, e)
	}
	var f fileFD
	var err error
	if hook := w.before; hook != nil {
		err = hook("read", rel)
	}
	if err == nil {
		f, err = h.d.openRead(name)
	}
	if err != nil {
		if gone(err) {
			return vanished, nil
		}
		// Opening fails on a link: if the file is no longer the one lstat
		// saw, look again.
		if now, lerr := h.d.lstat(name); lerr == nil && (!now.mode.IsRegular() || !sameFile(*st, now)) {
			return replaced, nil
		}
		return 0, pathErr("open", rel, err)
	}
	defer f.Close()
	opened, err := f.stat()
	if err != nil {
		return 0, pathErr("stat", rel, err)
	}
	if !opened.mode.IsRegular() || !sameFile(*st, opened) {
		return replaced, nil
	}
	// On the root's file system, with the feed on, it is a local one
	// (see localFS): a regular file's read comes back short only at its
	// end.
	digest, n, data, err := wk.read(f, st.key.size, wk.feed != nil && sameDevice(wk.rootSt, *st))
	if errors.Is(err, errGrew) {
		// It grew past the hash limit while it was read: it is known by
		// the stat record lstat gave, and looked at again next time.
		e.Digest, e.Size, e.kept, e.clean = statDigest(st.key), st.key.size, false, false
		return found, nil
	}
	if err != nil {
		if ctxErr := wk.ctx.Err(); ctxErr != nil {
			return 0, ctxErr
		}
		return 0, pathErr("read", rel, err)
	}
	// Bytes read again only because the key could not vouch for them (a
	// racily clean file) and found as they were are kept already: the
	// last reading kept them, and blobs are never dropped.
	again := old.kind == kindFile && !old.skip && old.kept && old.Digest == digest
	if data != nil && !again {
		// Bytes that replaced others this reading knew are asked about
		// only when hashing them again costs more than asking (see put).
		ask := !(old.kind == kindFile && !old.skip && old.Digest != "" && len(data) <= askAbove)
		if err := wk.put(digest, data, ask); err != nil {
			return 0, pathErr("keep", rel, err)
		}
	}
	e.Digest, e.Size, e.kept = digest, n, data != nil
	// Remember the digest only if the file did not change while it was read
	// (it read as many bytes as lstat said) and its times are strictly
	// older than the snapshot time (it is not racily clean).
	e.clean = n == st.key.size && st.key.mtime < wk.since && st.key.ctime < wk.since
	return found, nil
}

// unread observes the regular file name in directory h (rel in the
// workspace), larger than the hash limit, which lstat described as st,
// into e: by that stat record alone (see statDigest). Nothing of it is
// read, so nothing of it is kept.
//
// Its digest holds while its stat record does, but the record of a file
// written within one tick of the kernel's clock of the moment it is
// stat'ed can stay the same through a later write in that tick: a file
// read is read again next time (see the racy rule); one known by its
// stat record alone cannot be. So a file whose ctime is not older than
// the snapshot time is stat'ed again once it is older than the racy
// window (see settle): any write after that moves its ctime, which no
// unprivileged process can set back. The wait is one for the whole
// walk, whatever the number of such files (every wait ends at the same
// moment), and bounded (see walk.settleBy).
func (wk *walk) unread(h *dirHandle, name, rel string, st *sysStat, e *entry) (outcome, error) {
	clean := st.key.ctime < wk.since
	if !clean && wk.settle(st.key.ctime) {
		now, err := h.d.lstat(name)
		switch {
		case gone(err):
			return vanished, nil
		case err != nil:
			return 0, pathErr("lstat", rel, err)
		case !now.mode.IsRegular() || !sameFile(*st, now):
			return replaced, nil
		}
		// Unchanged since: no write can share its ctime's tick any
		// more. Changed: it is being written; this reading has it as
		// lstat first gave it, and the next looks at it again.
		clean = now.key == st.key
	}
	if err := wk.ctx.Err(); err != nil {
		return 0, err
	}
	e.Digest, e.Size, e.kept, e.clean = statDigest(st.key), st.key.size, false, clean
	return found, nil
}

// settle waits until ctime (ns since the epoch) is older than the
// Workspace's clock less the racy window, and reports whether it is:
// not when the walk is cancelled, or its settling time is over first.
func (wk *walk) settle(ctime int64) bool {
	w := wk.w
	for {
		since := w.now().Add(-w.racyWindow).UnixNano()
		if ctime < since {
			return true
		}
		wait := time.Duration(ctime-since) + time.Millisecond
		left := time.Until(wk.settleBy)
		if left <= 0 {
			return false
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-wk.ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// statDigest is the digest of a regular file larger than the hash limit
// (see [facts.StatDigestPrefix]): "stat:" and the hex SHA-256 of its
// stat key, domain-separated. It changes with anything the key sees, and
// never equals a content digest, which has no prefix.
func statDigest(k statKey) string {
	b := statPreimage(k)
	sum := sha256.Sum256(b[:])
	return facts.StatDigestPrefix + hex.EncodeToString(sum[:])
}

// StatDigest is the digest a [Workspace] gives the regular file fi
// describes (from os.Lstat or File.Stat) when the file is larger than its
// hash limit: see [facts.StatDigestPrefix]. It reads nothing; "" where fi
// is not a regular file. Whoever must tell whether such a file is still
// the one an observation saw (an undo) compares this, never its bytes.
func StatDigest(fi fs.FileInfo) string {
	return statDigestOf(fi)
}

// SpecialDigest is the digest the observer gives a file of mode m that is
// neither regular, a link nor a directory (see
// [facts.SpecialDigestPrefix]); "" for any other.
func SpecialDigest(m fs.FileMode) string {
	switch {
	case m.IsRegular(), m.IsDir(), m&fs.ModeSymlink != 0:
		return ""
	case m&fs.ModeNamedPipe != 0:
		return facts.SpecialDigestPrefix + "fifo"
	case m&fs.ModeSocket != 0:
		return facts.SpecialDigestPrefix + "socket"
	case m&fs.ModeCharDevice != 0:
		return facts.SpecialDigestPrefix + "char"
	case m&fs.ModeDevice != 0:
		return facts.SpecialDigestPrefix + "block"
	}
	return facts.SpecialDigestPrefix + "other"
}

func statDigestOf(fi fs.FileInfo) string {
	if fi == nil || !fi.Mode().IsRegular() {
		return ""
	}
	return statDigest(infoKey(fi))
}

// statPreimage is what statDigest hashes: the domain, then the key's
// fields, 8 bytes each, big-endian.
func statPreimage(k statKey) [len(statDigestDomain) + 40]byte {
	var b [len(statDigestDomain) + 40]byte
	copy(b[:], statDigestDomain)
	o := b[len(statDigestDomain):]
	binary.BigEndian.PutUint64(o[0:], uint64(k.size))
	binary.BigEndian.PutUint64(o[8:], uint64(k.mtime))
	binary.BigEndian.PutUint64(o[16:], uint64(k.ctime))
	binary.BigEndian.PutUint64(o[24:], k.ino)
	binary.BigEndian.PutUint64(o[32:], k.dev)
	return b
}

// statDigestDomain opens what statDigest hashes.
const statDigestDomain = "harness.workspace.stat-digest.v1\x00"

// isStatDigest reports whether d is a digest statDigest gave.
func isStatDigest(d string) bool { return facts.IsStatDigest(d) }

// errGrew: a file grew past the hash limit while it was read.
var errGrew = errors.New("grew past the hash limit while it was read")

var readBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

var sha256s = sync.Pool{New: func() any { return sha256.New() }}

// read hashes the file's content, checking for cancellation between
// chunks. When blobs are kept and the content fits the cap, it also
// returns the content. local: the file is on a local file system, whose
// read returns less than asked only at the end of the file; a read that
// comes back short with the size stat gave is then the last, with no
// read more to hear the end.
func (wk *walk) read(f io.Reader, size int64, local bool) (digest string, n int64, data []byte, err error) {
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
			if n > wk.w.hashLimit {
				return "", 0, nil, errGrew
			}
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
		if local && m < len(buf) && n == size {
			break
		}
	}
	return hex.EncodeToString(h.Sum(nil)), n, data, nil
}

// askAbove is the size above which new bytes of a file are always
// asked about before they are put (see put).
const askAbove = 64 << 10

// put keeps data in the workspace's Blobs and checks the digest it gives.
// A store that can say it has the digest already is asked first, when
// ask: it then neither hashes nor writes the bytes again. Without ask —
// for a file the last reading knew with other bytes, small enough to hash
// again cheaply, whose bytes are most likely new — and after a store
// said it has them not, the bytes go to a store that can take them
// without looking again ([NewBlobPutter]) that way: the look would most
// likely find nothing, and bytes kept already are only written again.
// Any other store gets them through PutBlob.
func (wk *walk) put(digest string, data []byte, ask bool) error {
	if c, ok := wk.w.blobs.(BlobChecker); ok && ask {
		if has, err := c.HasBlob(wk.ctx, digest); err == nil && has {
			return nil
		}
	}
	wk.w.putMu.Lock()
	defer wk.w.putMu.Unlock()
	putBlob := wk.w.blobs.PutBlob
	if p, ok := wk.w.blobs.(NewBlobPutter); ok {
		putBlob = p.PutNewBlob
	}
	got, err := putBlob(wk.ctx, data)
	if err != nil {
		return err
	}
	if got != digest {
		return fmt.Errorf("blob store returned digest %s for content with sha256 %s", got, digest)
	}
	return nil
}

// assemble builds the new reading of n from what its jobs found, sharing
// whatever did not change with the last reading.
func (wk *walk) assemble(n *node) *dirRec {
	ents, own := n.ents, n.own
	changed, dirty := n.changed.Load(), n.dirty.Load()
	mut := func() {
		if !own {
			ents, own = slices.Clone(ents), true
		}
	}
	for _, k := range n.kids {
		e := ents[k.i]
		if k.ent != nil {
			e = *k.ent
		}
		if k.n != nil {
			e.dir = wk.assemble(k.n)
		} else if e.kind == kindDir {
			e.dir = nil
		}
		if k.ent != nil && !e.same(&ents[k.i]) {
			dirty = true
		}
		if k.ent != nil || e.dir != ents[k.i].dir {
			if k.old.kind == kindDir && e.kind != kindDir && e.kind != kindGone {
				wk.forget(join(n.rel, k.name), k.old.dir)
			}
			mut()
			ents[k.i] = e
			changed = true
		}
	}
	for _, d := range n.dropped {
		wk.forget(join(n.rel, d.name), d.dir)
	}
	if slices.ContainsFunc(ents, func(e entry) bool { return e.kind == kindGone || e.kind == kindNew }) {
		var basisEnts []entry
		if n.basis != nil {
			basisEnts = n.basis.ents
		}
		mut()
		ents = slices.DeleteFunc(ents, func(e entry) bool {
			if e.kind == kindGone || e.kind == kindNew {
				if i := findEntry(basisEnts, e.name); i >= 0 && basisEnts[i].kind == kindDir {
					wk.forget(join(n.rel, e.name), basisEnts[i].dir)
				}
				return true
			}
			return false
		})
		changed, dirty = true, true
	}
	if !changed && n.basis != nil {
		if b := n.basis; b.unhashed {
			// A record from the store, kept as it was: its
			// subdirectories' records are linked now.
			b.derive(wk.epoch)
			b.digest()
			b.unhashed = false
			wk.w.digests.Add(1)
		}
		return n.basis
	}
	rec := &dirRec{key: n.st.key, clean: n.clean, watch: n.watch, ents: ents}
	if b := n.basis; b != nil && !b.unhashed && sameRows(b, rec) {
		// Nothing the digest covers changed (a name out of scope came or
		// went, a subdirectory's record changed but not its digest): the
		// digest stands.
		rec.derive(wk.epoch)
		rec.sum = b.sum
	} else {
		rec.finish(wk.epoch)
		wk.w.digests.Add(1)
	}
	if n.basis == nil || dirty && !unsettledOnly(n.basis, rec) {
		wk.puts = append(wk.puts, &putRec{rel: n.rel, rec: rec})
	}
	return rec
}

// sameRows reports whether the records a and b of one directory give its
// digest the same rows (see digest): the same names with a row, each of
// the same class and digest (a subdirectory's, its own digest). Entries
// with no row — out of scope, not a file, link or directory, a directory
// with no file in scope — count for nothing. b's subdirectories must be
// finished.
func sameRows(a, b *dirRec) bool {
	i, j := 0, 0
	for {
		for i < len(a.ents) && !hasRow(&a.ents[i]) {
			i++
		}
		for j < len(b.ents) && !hasRow(&b.ents[j]) {
			j++
		}
		if i == len(a.ents) || j == len(b.ents) {
			return i == len(a.ents) && j == len(b.ents)
		}
		x, y := &a.ents[i], &b.ents[j]
		if x.name != y.name || x.kind != y.kind {
			return false
		}
		if x.kind == kindDir {
			if x.dir.sum != y.dir.sum {
				return false
			}
		} else if modeClass(x.Mode) != modeClass(y.Mode) || x.Digest != y.Digest {
			return false
		}
		i, j = i+1, j+1
	}
}

// hasRow reports whether the entry has a row in its directory's digest.
func hasRow(e *entry) bool {
	switch {
	case e.skip:
		return false
	case e.kind == kindFile || e.kind == kindLink || e.kind == kindOther:
		return true
	case e.kind == kindDir:
		return e.dir != nil && e.dir.files > 0
	}
	return false
}

// unsettledOnly reports whether the new record of a directory differs from
// the last only in files and links that are not clean now (see the racy
// rule): the same key, the same names, each other entry as it was. The
// stat cache does not keep such a record again. Whatever reads the record
// kept before reads those entries again, because their stat records moved
// on since, exactly as it would read them from the new record, because
// they are not clean there; the change that settles one is kept. So a file
// rewritten by every action (a log, a cache) does not rewrite its
// directory's record in the store with every observation, and the store
// still spares a new process all that the last reading spares.
//
// The same holds of the directory's own key: a name that comes and goes
// between two observations (git's index.lock, with every git command)
// moves the directory's times, and a listing that is not clean now (a new
// process lists it again, as its key moved on since the record kept) is
// not kept again for that; the listing that settles is.
func unsettledOnly(old, r *dirRec) bool {
	if (old.key != r.key || old.clean != r.clean) && r.clean || len(old.ents) != len(r.ents) {
		return false
	}
	for i := range r.ents {
		o, e := &old.ents[i], &r.ents[i]
		if o.name != e.name {
			return false
		}
		if !e.same(o) && (e.skip || (e.kind != kindFile && e.kind != kindLink) || e.clean) {
			return false
		}
	}
	return true
}

// forget notes that the directory rel, last read as r (nil: not read by
// this process), is gone, and so are the records kept of it and of what
// was under it.
func (wk *walk) forget(rel string, r *dirRec) {
	if wk.w.meta == nil {
		return
	}
	wk.forgets = append(wk.forgets, rel)
	if r == nil {
		r = wk.w.loadRec(wk.ctx, rel)
	}
	if r == nil {
		return
	}
	for i := range r.ents {
		if e := &r.ents[i]; e.kind == kindDir && !e.skip {
			wk.forget(path.Join(rel, e.name), e.dir)
		}
	}
}
