package action

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// DefaultBlobCap is the largest file whose bytes [WithBlobs] keeps unless
// told otherwise: 1 MiB.
const DefaultBlobCap int64 = 1 << 20

// DefaultHashLimit is the largest regular file a [Workspace] reads and
// hashes unless [WithHashLimit] says otherwise: 1 GiB. A larger one is
// known by its stat record alone (see "What the key cannot see").
const DefaultHashLimit int64 = 1 << 30

// DefaultRacyWindow is how much older than the start of an observation a
// file's mtime and ctime must be for the file to be remembered as clean.
const DefaultRacyWindow = 2 * time.Second

// hashHeader opens the canonical byte layout of a workspace hash;
// hashHeaderV2 opens it instead when a path in it lies in a ".git" or a
// ".harness" (see "Hash" in the Workspace's documentation).
const (
	hashHeader   = "harness.workspace.v1\x00"
	hashHeaderV2 = "harness.workspace.v2\x00"
)

// Workspace observes a directory tree: an [Observer] whose snapshot lists
// every regular file and symlink under the root with its SHA-256 and mode.
// Unlike an identity taken from git, it sees every file, so a changed
// untracked file counts. Observe may be called from several goroutines;
// calls are serialized. One observation stats and reads with up to
// max(8, GOMAXPROCS) goroutines.
//
// The observation is the runtime's, never a tool's: what it remembers (the
// stat cache, the change feed) lives in the Workspace and the store, not
// in any adapter, and nothing an adapter returns goes into it.
//
// # Scope
//
// Every regular file and symlink under the root, recursively, except:
//
//   - git's working data in a ".git" directory at any depth (objects,
//     refs, logs, the index, HEAD, lock files: see guard.go for the exact
//     list). What in a ".git" can make a later git run a program is
//     observed: its config, hooks/, info/, modules/*/config, a commondir,
//     anything git does not write in its ordinary work; and a ".git" file
//     or link is observed as any file or link, so a nested repository, a
//     gitlink's ".git" or a planted one is an effect;
//   - the store's own files in a ".harness" directory at any depth: its
//     database (db/). Anything else there (project.json, config.json, a
//     serve.json) is observed, so a settings or token file a command
//     plants is an effect;
//   - the store itself when it is reached other than as a ".harness"
//     directory, wherever it is and whatever leads to it: the
//     directories [WithStorePaths] names (and the directory of a [Blobs]
//     that has one), recognised by device and inode, so a store reached
//     through a link to a directory inside the workspace is still left
//     out;
//   - the files the harness itself writes, given to [WithOwnFiles] (its
//     standard output redirected into the workspace, say), recognised by
//     device and inode, so a rename does not bring them into scope;
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
// [Snapshot.Hash] is a hash tree. Each directory has a digest: the
// SHA-256 of, for each entry it holds in scope, in byte order of the
// entries' names,
//
//	class   one byte: 'f' regular file, 'x' executable regular file,
//	        'l' symlink, 'd' directory
//	' '
//	digest  64 bytes, lower-case hex: the entry's Digest; for a
//	        directory, its own digest; for a file larger than the hash
//	        limit, its stat digest, "stat:" and 64 hex digits (see
//	        "What the key cannot see")
//	' '
//	name    the entry's name
//	0x00    (a name never contains NUL, so the layout is unambiguous)
//
// A directory with no file or link in scope anywhere under it has no row
// (an empty directory is not observed, as in git). The workspace hash is
// the lower-case hex SHA-256 of "harness.workspace.v3\x00" followed by
// the root directory's digest in lower-case hex. So a change rehashes
// only the directories from it up to the root, and two readings differ
// exactly in the directories whose digests differ ([Diff] looks only
// there).
//
// The mode counts only as that class: a file that gains or loses its
// owner execute bit (the bit git records, 100644 vs 100755) or turns into
// a symlink has changed; other permission bits (group/other, read/write)
// and times do not, so two checkouts of one tree under different umasks
// hash alike. Nothing else — no time, size or inode — goes into the hash.
//
// Earlier versions hashed the sorted list of paths instead
// ("harness.workspace.v1" and "v2", SHA-256 over one row per file with
// its whole path). A recorded hash is never recomputed from the workspace
// (an audit compares recorded hashes with each other), so old logs verify
// as they did; the first observation by this version of a workspace an
// older one observed last has another hash for the same files, and the
// thread's next action records that as a change of the workspace whose
// inventory, taken from the kept listing, is empty.
//
// # Incremental observation
//
// A Workspace keeps its last reading: every directory it listed, with the
// directory's own stat record, and every entry, with the (size, mtime,
// ctime, inode, device) it saw — what git's index keeps — and, for a file
// or link, the digest it read. The
// next observation — the "before" of the next action is the "after" of
// the last — re-validates that reading instead of starting over:
//
//   - a file whose stat record is unchanged, and whose reading was clean
//     (below), keeps its digest: it is not read again, and its bytes are
//     not kept again;
//   - a directory whose own stat record is unchanged, and whose listing
//     was clean, keeps its listing (a name added, removed or renamed
//     changes the directory's mtime and ctime);
//   - a file or a directory that is not, is read or listed again.
//
// Without a change feed that is one stat per entry and no reads: what git
// status does with its index. With one ([WithChangeFeed]), only what the
// feed reported, and what it cannot vouch for, is looked at.
//
// The digests are kept per directory (see "Hash"): an observation that
// found a directory's entries as they were keeps that directory's record
// and digest as they were, so it hashes, lists, sorts and compares only
// the directories where something changed and those above them.
//
// ctime and inode come from the platform's stat record where it has them
// (Linux, the BSDs, macOS), the device on Linux; elsewhere the key is size
// and mtime. A failed observation leaves what was remembered as it was.
//
// What the key cannot see: a change that keeps a file's size, inode and
// device and puts back its mtime (touch -d, utimensat) still moves its
// ctime, which no call lets an unprivileged process set: the kernel sets
// it to its own clock on every change of content, mode, owner or times.
// A change the key misses therefore needs root (setting the system clock
// back, CAP_SYS_TIME, around the write and the time reset; writing the
// block device or the file system's image underneath the kernel), or a
// file system that does not keep ctime honestly (a FUSE or network mount
// whose server is hostile). Within one tick of the kernel's coarse clock
// the racy rule below re-reads what the key could not tell apart.
//
// A regular file larger than the hash limit ([DefaultHashLimit], 1 GiB,
// unless [WithHashLimit] says otherwise) is never read: a sparse file
// costs no disk, and `truncate -s 2T` would otherwise cost an hour of
// hashing zeros, with no interrupt heard. Its digest is a stat digest,
// "stat:" and the SHA-256 of its key (size, mtime, ctime, inode, device;
// see [facts.StatDigestPrefix]), which no content digest equals. So
// anything the key sees — and, as above, any change of content, mode or
// times moves ctime — shows as "modified", and an unchanged file stays
// unchanged, across observations and, through the stat cache, across
// processes; but what the key cannot see, nothing else sees for such a
// file either, and a new inode or device (a copy put back, a file system
// mounted again) shows as a change though the bytes are the same. Its
// bytes are never kept, so no diff shows them and undo cannot restore
// them: both say so. The racy rule cannot read such a file again, so
// instead a file whose ctime is not older than the snapshot time is
// stat'ed again once it is older than the racy window — one wait for the
// whole observation, at most twice the window — so that no later write
// shares its ctime's tick; one that changed meanwhile is being written,
// and is looked at again next time. A file that grows past the limit
// while it is read is known by its stat record too.
//
// # Racily clean entries
//
// A file written in the same timestamp tick as the moment it was read can
// change again without its stat record changing; git calls such an entry
// racily clean. The rule here: every observation takes a snapshot time,
// the wall clock at its start less the racy window ([DefaultRacyWindow]
// unless [WithRacyWindow] says otherwise), and a file read during it is
// remembered as clean only if its mtime and its ctime are both strictly
// older than the snapshot time (and it read as many bytes as its stat
// record said). Anything else is read again next time, and again until an
// observation starts late enough. A directory's listing is remembered as
// clean by the same rule on the directory's times. The window covers the
// kernel's coarse timestamp clock lagging the wall clock and filesystems
// that keep times to the second; raise it for a filesystem whose clock is
// far from this machine's (network mounts) or whose granularity is coarser
// (FAT: 2 s). The clock decides only what is re-read, never what is
// hashed. These rules hold with the change feed on: it adds reasons to
// look again, never a reason to trust more.
//
// # Stat cache across processes
//
// When the store offers a [Meta] space ([WithStatCache], or a [Blobs] that
// also implements Meta), the reading is kept there too, one record per
// directory keyed by the workspace root and the directory's path, written
// after each observation for the directories whose record changed —
// beyond files that are not clean now, and the times of a listing that is
// not clean now (see unsettledOnly: a file rewritten by every action, or
// a lock file that comes and goes with every git command, does not
// rewrite its directory's record each time; a new process reads it, or
// lists it, again either way). A new
// Workspace over the same root starts from those records: it stats every
// entry, as any observation without a feed does, and reads (and keeps as
// blobs) only what changed since. A record is only a hint: it is checked
// against the directory and each entry's stat record exactly as the
// in-memory reading is, so a stale record costs a read, and a record that
// does not decode (damaged, or of another version) is ignored.
//
// # Change feed
//
// With [WithChangeFeed] on Linux, the Workspace watches every directory it
// lists with inotify and, at the start of each observation, reads the
// changes the kernel queued since the last one (the kernel queues an
// event before the call that caused it returns, so nothing made before
// the observation began is missed). Only the directories and entries
// they name are looked at again, together with everything the feed cannot
// vouch for: entries not remembered as clean (racily clean, above), files
// with more than one hard link (a change through a link outside the
// workspace is reported there, not here), and directories on another file
// system than the root's. The feed is used only on local file systems
// (ext4, XFS, btrfs, tmpfs, overlayfs and the like): on a network or FUSE
// mount a change made elsewhere is never reported. When the kernel's
// queue overflowed (fs.inotify.max_queued_events: nothing reads it
// between observations, so a change of more entries than that overflows
// it), or a watched directory was moved (its watch would then name a
// stale path), or the root's path names another directory than the one
// watched (a directory above the root was moved: no watch sees that; each
// observation describes the root's path once to find out), the next
// observation stats everything and the watches are made again; when watches cannot be added (the kernel's limits, or one
// directory reached by two paths) or the feed cannot start, the Workspace
// says why ([Workspace.Feed]) and walks, as without one.
// [Workspace.Close] releases the feed.
//
// A write through a shared memory mapping raises no write event; the
// mapping needs a descriptor opened for writing, whose close the feed
// takes as a write, so a file mapped by a command that has ended is read
// again. A mapping that outlives the observation — a process left running
// that writes through it later — is seen only when something else makes
// the file looked at again (its stat record, without a feed).
type Workspace struct {
	root       string
	skipPaths  map[string]bool
	skipFunc   func(path string, dir bool) bool
	blobs      Blobs
	blobCap    int64
	hashLimit  int64 // the largest file read and hashed
	racyWindow time.Duration
	workers    int
	meta       Meta
	metaSet    bool // WithStatCache was given, even with nil
	storePaths []string
	own        []sysStat
	feedWanted bool
	optErrs    []error // what the options refused (NewWorkspace returns it)

	// now, before, watchHook and feedHold are test hooks: the clock that
	// sets the snapshot time; a call made before a file's content is read
	// (op "read") or a subdirectory is opened (op "list"), whose error is
	// handled as the open's error; a call made before a directory is
	// watched, whose error is handled as the watch's; and a lock the feed
	// read-locks before it takes each event.
	now       func() time.Time
	before    func(op, rel string) error
	watchHook func(rel string) error
	feedHold  *sync.RWMutex

	// turn holds one token: a reading takes it, waiting with its
	// context, before mu, so that one waiting for another to end (a
	// warm one over a big tree) gives up when its context is done.
	turn chan struct{}

	mu      sync.Mutex // serializes Observe; guards what follows
	tree    *dirRec    // the last reading; nil before the first
	hash    string     // the workspace hash of tree
	listed  *dirRec    // the reading files lists (see Observe)
	files   []FileState
	needAll bool // the next observation must look at everything
	feed    *feed
	box     *feedBox // the feed again, for the cleanup of a Workspace never closed
	epoch   uint64   // the feed's generation: a directory watched in another is not vouched for
	feedErr error    // why there is no feed although one was wanted
	closed  bool
	reading uint64 // the number of the last reading that succeeded (see Named); 0: none
	// namedScans counts the directory records Named searched anew (the
	// tests count them).
	namedScans uint64

	readings atomic.Uint64 // how many readings were started (see Readings)
	digests  atomic.Uint64 // how many directory digests the walks computed (the tests count them)
	started  atomic.Uint64 // how many goroutines the walks started besides the caller's (the tests count them)

	putMu sync.Mutex // serializes PutBlob calls

	manMu sync.Mutex // guards man, manLooked and manKept
	man   manifestBase
	// manLooked: the last manifest an earlier process kept of this root
	// was looked for (see lastManifest); manKept is the digest this one
	// last noted as the last kept, in the stat cache's Meta.
	manLooked bool
	manKept   string

	warmMu    sync.Mutex // guards warmStops
	warmStops []func()   // stop the readings Warm started
}

// statKey is what a file's stat record must still say for its cached digest
// to be trusted: what git's index keeps of it.
type statKey struct {
	size  int64
	mtime int64 // ns since the epoch
	ctime int64 // ns since the epoch; 0 where the platform has none
	ino   uint64
	dev   uint64 // the device it is on; 0 but on Linux
}

// WorkspaceOption configures a [Workspace]. An option given a bad value
// (a nil Blobs, an empty path, a negative window) makes [NewWorkspace]
// return an error matching [ErrBadOption] that names it.
type WorkspaceOption func(*Workspace)

// refuse records that an option was given a bad value: NewWorkspace
// returns it.
func (w *Workspace) refuse(format string, args ...any) {
	w.optErrs = append(w.optErrs, fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...))
}

// WithBlobs keeps the bytes of every file the workspace reads whose size is
// at most limit (limit <= 0 means [DefaultBlobCap]) in b, so a later diff or
// undo can fetch the contents before and after an action — whoever changed
// them, a tool or a shell command. Larger files are recorded by digest
// only. A file is stored when it is read, so a file the stat cache spares
// is not stored again. Calls to b.PutBlob are serialized.
//
// When b also implements [Meta], the Workspace keeps its stat cache there
// (unless [WithStatCache] says otherwise); when it has a Dir() string
// method (the Pebble store), that directory is left out of every
// observation as [WithStorePaths] would.
func WithBlobs(b Blobs, limit int64) WorkspaceOption {
	return func(w *Workspace) {
		if b == nil {
			w.refuse("WithBlobs: nil Blobs")
			return
		}
		if limit <= 0 {
			limit = DefaultBlobCap
		}
		w.blobs, w.blobCap = b, limit
	}
}

// WithStatCache keeps the Workspace's reading in m, so that a new process
// observing the same root reads only what changed (see "Stat cache across
// processes" above). nil keeps nothing, even when the [Blobs] given to
// [WithBlobs] offers a Meta.
func WithStatCache(m Meta) WorkspaceOption {
	return func(w *Workspace) {
		w.meta, w.metaSet = m, true
	}
}

// WithStorePaths leaves out of every observation the directories at these
// paths, and everything under them, wherever in the workspace they are
// reached from: each path is resolved (links followed) anew in every
// observation, when it first looks at a directory, and any directory with
// the same device and inode is skipped. A path that does not exist yet, or
// is not a directory, is looked for again next time.
// This is how the store is never observed, even through a link.
func WithStorePaths(paths ...string) WorkspaceOption {
	return func(w *Workspace) {
		for _, p := range paths {
			if p == "" {
				w.refuse("WithStorePaths: empty path")
				continue
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				w.refuse("WithStorePaths: %v", err)
				continue
			}
			w.storePaths = append(w.storePaths, abs)
		}
	}
}

// WithOwnFiles leaves out of every observation the files the harness
// itself writes — say, its standard output and error when a person
// redirected them into the workspace — recognised by device and inode, so
// that neither their path nor a rename brings them into scope. A file that
// is not a regular file (a terminal, a pipe) is never in a workspace and
// is ignored.
func WithOwnFiles(files ...*os.File) WorkspaceOption {
	return func(w *Workspace) {
		for _, f := range files {
			if f == nil {
				w.refuse("WithOwnFiles: nil file")
				continue
			}
			st, err := fstatFile(f)
			if err != nil {
				w.refuse("WithOwnFiles: %s: %v", f.Name(), err)
				continue
			}
			if st.mode.IsRegular() {
				w.own = append(w.own, st)
			}
		}
	}
}

// ownFilesOf returns the identities of the files an observer leaves out
// as the harness's own ([WithOwnFiles]), as a ledger entry carries them.
func ownFilesOf(o Observer) []ownFile {
	w, ok := o.(*Workspace)
	if !ok {
		return nil
	}
	var own []ownFile
	for _, st := range w.own {
		if f, ok := ownFileOf(st); ok {
			own = append(own, f)
		}
	}
	return own
}

// ownNowIn returns what tells, of a change an observer saw, whether it is
// only one of the files another process left out as its own: a path its
// reading before could not list (it was left out) that now names a
// regular file that is one of them. A file at that path that is another
// (the command replaced it) is a change like any other.
func ownNowIn(o Observer) func([]ownFile, facts.PathChange) bool {
	w, ok := o.(*Workspace)
	return func(own []ownFile, c facts.PathChange) bool {
		if !ok || c.Before != "" || c.After == "" {
			return false
		}
		f, isFile := lstatOwn(filepath.Join(w.root, filepath.FromSlash(c.Path)))
		return isFile && slices.Contains(own, f)
	}
}

// WithChangeFeed watches the workspace's directories for changes, where
// the platform has a feed (inotify on Linux), so that an observation looks
// only at what changed (see "Change feed" above). Where there is none, or
// it cannot be used, observations walk as without it. A Workspace with a
// feed should be closed.
func WithChangeFeed(on bool) WorkspaceOption {
	return func(w *Workspace) {
		w.feedWanted = on
	}
}

// WithSkipPaths leaves out the entries at these paths (slash-separated,
// relative to the root) and, for a directory, everything under it, in
// addition to what the scope leaves out.
func WithSkipPaths(paths ...string) WorkspaceOption {
	return func(w *Workspace) {
		for _, p := range paths {
			if p == "" || p == "." || path.IsAbs(p) || path.Clean(p) != p || !filepath.IsLocal(filepath.FromSlash(p)) {
				w.refuse("WithSkipPaths: %q is not a clean slash-separated path inside the workspace", p)
				continue
			}
			w.skipPaths[p] = true
		}
	}
}

// WithSkipFunc leaves out every entry for which skip returns true, in
// addition to what the scope leaves out. path is slash-separated and relative
// to the root; dir says whether the entry is a directory, whose contents
// are then not visited. skip is called from several goroutines, and must
// give the same answer for the same path each time.
func WithSkipFunc(skip func(path string, dir bool) bool) WorkspaceOption {
	return func(w *Workspace) {
		if skip == nil {
			w.refuse("WithSkipFunc: nil function")
			return
		}
		prev := w.skipFunc
		w.skipFunc = func(p string, dir bool) bool { return (prev != nil && prev(p, dir)) || skip(p, dir) }
	}
}

// WithRacyWindow sets how much older than the start of an observation a
// file's timestamps must be for its digest to be trusted next time (see
// [DefaultRacyWindow]). A window below zero is an error.
func WithRacyWindow(d time.Duration) WorkspaceOption {
	return func(w *Workspace) {
		if d < 0 {
			w.refuse("WithRacyWindow: negative window %v", d)
			return
		}
		w.racyWindow = d
	}
}

// WithHashLimit sets the largest regular file the Workspace reads and
// hashes, in bytes ([DefaultHashLimit] unless told otherwise). A larger
// file is never opened: its digest is a stat digest (see
// [facts.StatDigestPrefix]), its bytes are not kept, and what shows or
// undoes a change says so (see "What the key cannot see" above). A limit
// below 1 is an error.
func WithHashLimit(n int64) WorkspaceOption {
	return func(w *Workspace) {
		if n < 1 {
			w.refuse("WithHashLimit: %d is not a size in bytes", n)
			return
		}
		w.hashLimit = n
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
		hashLimit:  DefaultHashLimit,
		workers:    max(8, runtime.GOMAXPROCS(0)),
		now:        time.Now,
		turn:       make(chan struct{}, 1),
	}
	for _, opt := range opts {
		opt(w)
	}
	if len(w.optErrs) > 0 {
		return nil, fmt.Errorf("workspace %s: %w", abs, errors.Join(w.optErrs...))
	}
	if w.feedWanted {
		// A Workspace dropped without Close still releases its feed: the
		// inotify instance is a per-user resource (fs.inotify.max_user_instances).
		w.box = &feedBox{}
		runtime.AddCleanup(w, func(b *feedBox) { b.set(nil); b.dropRoot() }, w.box)
	}
	if !w.metaSet {
		if m, ok := w.blobs.(Meta); ok {
			w.meta = m
		}
	}
	if d, ok := w.blobs.(interface{ Dir() string }); ok && d.Dir() != "" {
		w.storePaths = append(w.storePaths, d.Dir())
	}
	return w, nil
}

// Root is the absolute path of the observed directory.
func (w *Workspace) Root() string { return w.root }

// HashLimit is the largest regular file the Workspace reads and hashes
// (see [WithHashLimit]); what previews a change to its files reads no
// larger one either.
func (w *Workspace) HashLimit() int64 { return w.hashLimit }

// Feed reports whether the change feed is on, and, when one was wanted
// but is not, why not.
func (w *Workspace) Feed() (on bool, why error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.feed != nil, w.feedErr
}

// Close releases the change feed, if any. Observing after Close is an
// error.
func (w *Workspace) Close() error {
	w.warmMu.Lock()
	stops := w.warmStops
	w.warmStops = nil
	w.warmMu.Unlock()
	for _, stop := range stops {
		stop()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.box.dropRoot()
	return w.stopFeed()
}

// Warm takes a reading in the background, and keeps its manifest in the
// Blobs given to [WithBlobs], as an action's first observation would:
// a new process calls it when it starts, so that the reading of every
// entry of the tree (a stat each, through the stat cache) overlaps
// whatever else it does before its first action — opening the rest of
// its state, a model's first turn. The first observation an action
// waits for then looks only at what the change feed reported since, as
// every later one does; what it reports is the same (the feed's rules,
// under "Change feed" above, decide what is looked at again). Without a
// feed (none wanted, none on this system, or a file system whose changes
// the kernel does not all report) Warm does nothing: the next
// observation would stat every entry again anyway.
//
// stop cancels the reading and waits for it to end; Close stops it too.
// A reading stopped, or that failed, leaves the next observation to
// look at everything, as if Warm had not been called.
func (w *Workspace) Warm() (stop func()) {
	if !w.feedWanted || !feedSupported {
		return func() {}
	}
	if ok, _, err := localFS(w.root); err != nil || !ok {
		return func() {} // no feed will run here (see plan)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		snap, err := w.observeTree(ctx)
		if err == nil && w.blobs != nil {
			_, _ = w.KeepManifest(ctx, w.blobs, snap)
		}
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	w.warmMu.Lock()
	w.warmStops = append(w.warmStops, stop)
	w.warmMu.Unlock()
	return stop
}

// errClosed: the Workspace was closed.
var errClosed = errors.New("workspace observer is closed")

// Observe reads the workspace: every file in scope with its digest and
// mode, sorted by path, and the workspace hash. A file that vanishes while
// it is being observed is simply not in the snapshot; any other failure to
// read a path (a permission error, say) fails the observation with an
// error naming the path. A cancelled context ends it promptly with the
// context's error.
//
// The snapshot's Files may be shared with the Workspace and with earlier
// snapshots: do not modify them. Making that list costs time in the size
// of the tree; the [Boundary] does not ask for it (see observeTree).
func (w *Workspace) Observe(ctx context.Context) (Snapshot, error) {
	s, err := w.observeTree(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.listed != s.tree {
		w.files = s.Listing()
		w.listed = s.tree
	}
	return Snapshot{Hash: s.Hash, Files: w.files}, nil
}

// treeObserver is an [Observer] that can also give its reading as a
// tree, without the listing, so that what the Boundary does with it —
// [Diff], [Workspace.KeepManifest] — costs what changed, not the size of
// the workspace. [Workspace] is one.
type treeObserver interface {
	observeTree(ctx context.Context) (Snapshot, error)
}

// observeTree is Observe without the listing: the snapshot's Files is nil
// and it carries the reading itself, which [Snapshot.Listing], [Diff] and
// [Workspace.KeepManifest] read.
func (w *Workspace) observeTree(ctx context.Context) (Snapshot, error) {
	select {
	case w.turn <- struct{}{}:
		defer func() { <-w.turn }()
	case <-ctx.Done():
		return Snapshot{}, fmt.Errorf("observe %s: %w", w.root, ctx.Err())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Snapshot{}, fmt.Errorf("observe %s: %w", w.root, errClosed)
	}
	if err := ctx.Err(); err != nil {
		return Snapshot{}, fmt.Errorf("observe %s: %w", w.root, err)
	}
	n := w.readings.Add(1)
	wk := &walk{
		w:     w,
		since: w.now().Add(-w.racyWindow).UnixNano(),
		// Files known by their stat record alone wait for their times
		// to settle for at most twice the window: what was written
		// before the walk began is settled after one.
		settleBy: time.Now().Add(2*w.racyWindow + 10*time.Millisecond),
		all:      true,
		load:     w.tree == nil && w.meta != nil,
	}
	wk.ctx, wk.cancel = context.WithCancelCause(ctx)
	defer wk.cancel(nil)
	if w.feed != nil && w.tree != nil {
		if at, moved := w.rootMoved(); moved {
			// Another directory at the root's path: look at it all,
			// with a new feed.
			w.stopFeed()
			w.needAll = true
		} else {
			wk.rootAt = &at
		}
	}
	if err := w.plan(wk); err != nil {
		return Snapshot{}, fmt.Errorf("observe %s: %w", w.root, err)
	}
	var tree *dirRec
	var err error
	if !wk.all && len(wk.marks) == 0 && w.tree != nil && !w.tree.recheck {
		// The feed reported nothing, and the last reading vouches for
		// every entry in it: it stands, with nothing opened.
		tree = w.tree
	} else {
		wk.ownIDs = w.own
		// What the feed sends the walk to starts on this goroutine alone.
		wk.alone.Store(!wk.all)
		tree, err = wk.run()
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		// The events taken for this observation are spent: look at
		// everything next time.
		w.needAll = true
		return Snapshot{}, fmt.Errorf("observe %s: %w", w.root, err)
	}
	w.needAll = false
	w.reading = n
	if wk.feedErr != nil {
		w.feedErr = wk.feedErr
		w.stopFeed()
	}
	if w.meta != nil {
		w.persist(ctx, wk)
	}
	if tree != w.tree || w.hash == "" {
		w.hash = treeHash(tree.sum)
		w.tree = tree
	}
	return Snapshot{Hash: w.hash, tree: w.tree}, nil
}

// plan decides what the walk wk looks at: everything, or, when the feed
// vouches for the last reading, what it reported. It starts the feed when
// one is wanted and none runs.
func (w *Workspace) plan(wk *walk) error {
	if !w.feedWanted || !feedSupported || w.feedErr != nil {
		return nil
	}
	if w.feed != nil {
		events, err := w.feed.sync(wk.ctx)
		if err != nil && wk.ctx.Err() != nil {
			w.needAll = true
			return err
		}
		if err == nil {
			m, ok := markEvents(w.tree, events)
			if ok && !w.needAll && w.tree != nil {
				wk.all, wk.marks = false, m
			}
			if ok {
				wk.feed, wk.epoch = w.feed, w.epoch
				return nil
			}
		}
		// The feed lost events, or its watches name stale paths: make
		// them again, and look at everything.
		w.stopFeed()
	}
	if ok, fsType, err := localFS(w.root); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("change feed: the file system of %s (type 0x%x) is not one whose every change the kernel reports", w.root, fsType)
		}
		w.feedErr = err
		return nil
	}
	f, err := startFeed(w.root, w.feedHold)
	if err != nil {
		w.feedErr = err
		return nil
	}
	w.feed = f
	w.box.set(f)
	w.epoch++
	wk.feed, wk.epoch = f, w.epoch
	return nil
}

// feedBox holds the running feed apart from the Workspace, so that a
// cleanup attached to the Workspace can close it.
type feedBox struct {
	mu   sync.Mutex // guards f and kept
	f    *feed
	kept keptRoot // the root kept open while the feed runs (see openRoot)
}

// set records f as the running feed, closing the one before unless it is
// f.
func (b *feedBox) set(f *feed) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil && b.f != f {
		b.f.close()
	}
	b.f = f
}

// stopFeed closes the feed, if any; what it vouched for is forgotten.
func (w *Workspace) stopFeed() error {
	if w.feed == nil {
		return nil
	}
	err := w.feed.close()
	w.feed = nil
	w.box.dropRoot()
	w.box.mu.Lock()
	w.box.f = nil
	w.box.mu.Unlock()
	w.epoch++
	return err
}

// storeIdentities are the store's directories as they resolve now, that
// no observation may enter, wherever they are reached from. A store path
// that resolves to anything but a directory leaves nothing out.
func (w *Workspace) storeIdentities() []sysStat {
	var ids []sysStat
	for _, p := range w.storePaths {
		if st, err := statPath(p); err == nil && st.mode.IsDir() {
			ids = append(ids, st)
		}
	}
	return ids
}

// modeClass is the part of a file's mode that counts as content: 'l' for a
// symlink, 'o' for a special file (a FIFO, socket or device: its digest
// says which), 'x' for a regular file with its owner execute bit set, 'f'
// for any other regular file.
func modeClass(m fs.FileMode) byte {
	switch {
	case m&fs.ModeSymlink != 0:
		return 'l'
	case m&fs.ModeType != 0 && !m.IsDir():
		return 'o'
	case m&0o100 != 0:
		return 'x'
	}
	return 'f'
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

// statKeyOf is the stat cache key of a file: size and mtime from fi, and
// ctime and inode from the platform's stat record when it has them.
func statKeyOf(fi fs.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	k.ino, k.ctime = inoCtime(fi.Sys())
	return k
}

// sysFields is where a platform's stat record keeps the inode, the link
// count and the ctime: the index of the Ino and Nlink fields, and of the
// ctime timespec field (Ctim on Linux and most unixes, Ctimespec on macOS
// and FreeBSD) with its Sec and Nsec fields. -1 where there is none.
type sysFields struct{ ino, nlink, ctim, sec, nsec int }

var sysLayouts sync.Map // reflect.Type → sysFields

// sysRecord returns the struct a FileInfo.Sys() value points to and where
// its fields are, or false.
func sysRecord(sys any) (reflect.Value, sysFields, bool) {
	v := reflect.ValueOf(sys)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return v, sysFields{}, false
	}
	v = v.Elem()
	l, ok := sysLayouts.Load(v.Type())
	if !ok {
		l = layoutOf(v.Type())
		sysLayouts.Store(v.Type(), l)
	}
	return v, l.(sysFields), true
}

// inoCtime reads the inode and ctime (ns) out of a FileInfo.Sys() value by
// field name, so one file serves every platform without build tags: zero
// where the record has no such fields (Windows).
func inoCtime(sys any) (ino uint64, ctime int64) {
	v, f, ok := sysRecord(sys)
	if !ok {
		return 0, 0
	}
	if f.ino >= 0 {
		ino = uintOf(v.Field(f.ino))
	}
	if f.ctim >= 0 {
		ts := v.Field(f.ctim)
		ctime = intOf(ts.Field(f.sec))*int64(time.Second) + intOf(ts.Field(f.nsec))
	}
	return ino, ctime
}

// nlinkOf reads the link count out of a FileInfo.Sys() value: 1 where the
// record has none.
func nlinkOf(sys any) uint64 {
	v, f, ok := sysRecord(sys)
	if !ok || f.nlink < 0 {
		return 1
	}
	return uintOf(v.Field(f.nlink))
}

func layoutOf(t reflect.Type) sysFields {
	f := sysFields{ino: -1, nlink: -1, ctim: -1, sec: -1, nsec: -1}
	isInt := func(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Uint64 }
	if sf, ok := t.FieldByName("Ino"); ok && len(sf.Index) == 1 && isInt(sf.Type.Kind()) {
		f.ino = sf.Index[0]
	}
	if sf, ok := t.FieldByName("Nlink"); ok && len(sf.Index) == 1 && isInt(sf.Type.Kind()) {
		f.nlink = sf.Index[0]
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
