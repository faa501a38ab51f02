package action

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"
	"strings"
	"sync"

	"github.com/seed-7cc7a084/harness/facts"
)

// The workspace hash is a hash tree: each directory's digest covers its
// own entries, a subdirectory by its digest, so an observation rehashes
// only the directories on the way from a change to the root, and two
// readings differ exactly where their directories' digests do. See "Hash"
// in the Workspace's documentation for the layout.

// hashHeaderV3 opens the byte string whose SHA-256 is the workspace hash.
const hashHeaderV3 = "harness.workspace.v3\x00"

// entryRow appends the row that stands for one entry in its directory's
// digest: class, digest, name.
func entryRow(b []byte, class byte, digest, name string) []byte {
	b = append(b, class, ' ')
	b = append(b, digest...)
	b = append(b, ' ')
	b = append(b, name...)
	return append(b, 0)
}

// digestRows hashes rows as they are appended by row, flushing in
// chunks. One is taken from digestRowsPool and given back by sum: a
// directory's digest is computed at every observation that changed it,
// and its buffer and hash need not be made each time.
type digestRows struct {
	h   hash.Hash
	buf []byte
}

var digestRowsPool = sync.Pool{New: func() any {
	return &digestRows{h: sha256.New(), buf: make([]byte, 0, 4<<10)}
}}

func newDigestRows() *digestRows {
	d := digestRowsPool.Get().(*digestRows)
	d.h.Reset()
	d.buf = d.buf[:0]
	return d
}

func (d *digestRows) row(class byte, digest, name string) {
	d.buf = entryRow(d.buf, class, digest, name)
	if len(d.buf) > 3<<10 {
		d.h.Write(d.buf)
		d.buf = d.buf[:0]
	}
}

// sum writes the digest of the rows to out and gives d back to the
// pool: d is not used after.
func (d *digestRows) sum(out *[32]byte) {
	d.h.Write(d.buf)
	d.h.Sum(out[:0])
	digestRowsPool.Put(d)
}

// digest computes r.sum from r's entries, which must be finished (their
// directories' sums and file counts known).
func (r *dirRec) digest() {
	d := newDigestRows()
	var sub [64]byte
	for i := range r.ents {
		e := &r.ents[i]
		if e.skip {
			continue
		}
		switch e.kind {
		case kindFile, kindLink, kindOther:
			d.row(modeClass(e.Mode), e.Digest, e.name)
		case kindDir:
			if e.dir == nil || e.dir.files == 0 {
				continue // an empty directory is not observed
			}
			hex.Encode(sub[:], e.dir.sum[:])
			d.row('d', string(sub[:]), e.name)
		}
	}
	d.sum(&r.sum)
}

// treeHash is the workspace hash of a reading whose root directory has
// the digest sum.
func treeHash(sum [32]byte) string {
	var b [len(hashHeaderV3) + 64]byte
	copy(b[:], hashHeaderV3)
	hex.Encode(b[len(hashHeaderV3):], sum[:])
	h := sha256.Sum256(b[:])
	return hex.EncodeToString(h[:])
}

// hashFiles is the workspace hash of a listing, sorted or not: the same
// hash tree as a reading of the same files has.
func hashFiles(files []FileState) string {
	return treeHash(listDigest(sortedFiles(files), 0))
}

// listDigest is the digest of the directory whose files are files (sorted
// by path), each path with the directory's prefix of length off.
func listDigest(files []FileState, off int) [32]byte {
	type item struct {
		name   string
		class  byte
		digest string
	}
	var items []item
	for i := 0; i < len(files); {
		rest := files[i].Path[off:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			items = append(items, item{name: rest, class: modeClass(files[i].Mode), digest: files[i].Digest})
			i++
			continue
		}
		// The paths under one directory are contiguous in path order.
		prefix := files[i].Path[:off+j+1]
		k := i + 1
		for k < len(files) && strings.HasPrefix(files[k].Path, prefix) {
			k++
		}
		sum := listDigest(files[i:k], off+j+1)
		items = append(items, item{name: rest[:j], class: 'd', digest: hex.EncodeToString(sum[:])})
		i = k
	}
	slices.SortStableFunc(items, func(a, b item) int { return strings.Compare(a.name, b.name) })
	d := newDigestRows()
	for _, it := range items {
		d.row(it.class, it.digest, it.name)
	}
	var sum [32]byte
	d.sum(&sum)
	return sum
}

// Listing is the snapshot's files in path order. A snapshot that the
// [Boundary] took from a [Workspace] for its own use carries the reading
// as a tree and leaves Files nil until asked: Listing makes the list from
// the tree then. For any other snapshot it is Files.
func (s Snapshot) Listing() []FileState {
	if s.Files != nil || s.tree == nil {
		return s.Files
	}
	return s.tree.flatten(make([]FileState, 0, s.tree.files))
}

// listed reports whether an entry of a reading is a file, link or
// special file in scope.
func (e *entry) listed() bool {
	return !e.skip && (e.kind == kindFile || e.kind == kindLink || e.kind == kindOther)
}

// subtree is the directory record of an entry that is a directory in
// scope, or nil.
func (e *entry) subtree() *dirRec {
	if e.skip || e.kind != kindDir {
		return nil
	}
	return e.dir
}

// pairs calls f for every name in a or b (either may be nil), in name
// order, with the entry each has under it (nil: none).
func pairs(a, b *dirRec, f func(ea, eb *entry)) {
	var ae, be []entry
	if a != nil {
		ae = a.ents
	}
	if b != nil {
		be = b.ents
	}
	i, j := 0, 0
	for i < len(ae) || j < len(be) {
		switch {
		case j == len(be) || (i < len(ae) && ae[i].name < be[j].name):
			f(&ae[i], nil)
			i++
		case i == len(ae) || be[j].name < ae[i].name:
			f(nil, &be[j])
			j++
		default:
			f(&ae[i], &be[j])
			i++
			j++
		}
	}
}

// treeDiff is [Diff] of two readings: it goes down only into the
// directories whose digests differ, so its cost is that of the change,
// not of the tree.
func treeDiff(a, b *dirRec) []facts.PathChange {
	var out []facts.PathChange
	var walk func(a, b *dirRec)
	gone := func(e *entry) {
		if e.listed() {
			out = append(out, facts.PathChange{Path: e.Path, Before: e.Digest, BeforeMode: PathMode(e.Mode)})
		} else if d := e.subtree(); d != nil {
			walk(d, nil)
		}
	}
	came := func(e *entry) {
		if e.listed() {
			out = append(out, facts.PathChange{Path: e.Path, After: e.Digest, AfterMode: PathMode(e.Mode)})
		} else if d := e.subtree(); d != nil {
			walk(nil, d)
		}
	}
	walk = func(a, b *dirRec) {
		if a == b || (a != nil && b != nil && a.sum == b.sum) {
			return
		}
		pairs(a, b, func(ea, eb *entry) {
			switch {
			case ea == nil:
				came(eb)
			case eb == nil:
				gone(ea)
			case ea.listed() && eb.listed():
				if ea.Digest != eb.Digest || modeClass(ea.Mode) != modeClass(eb.Mode) {
					out = append(out, facts.PathChange{Path: eb.Path, Before: ea.Digest, After: eb.Digest,
						BeforeMode: PathMode(ea.Mode), AfterMode: PathMode(eb.Mode)})
				}
			case ea.subtree() != nil && eb.subtree() != nil:
				walk(ea.dir, eb.dir)
			default:
				gone(ea)
				came(eb)
			}
		})
	}
	walk(a, b)
	slices.SortFunc(out, func(x, y facts.PathChange) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// treeOps is the manifest delta from one reading to another: every path
// whose entry differs in any field (a permission bit too), or that came
// or went. It goes down only into directories whose records differ: a
// record that did not change is shared between the two readings.
func treeOps(a, b *dirRec) []manifestOp {
	var ops []manifestOp
	var walk func(a, b *dirRec)
	gone := func(e *entry) {
		if e.listed() {
			ops = append(ops, manifestOp{gone: true, entry: FileState{Path: e.Path}})
		} else if d := e.subtree(); d != nil {
			walk(d, nil)
		}
	}
	came := func(e *entry) {
		if e.listed() {
			ops = append(ops, manifestOp{entry: e.FileState})
		} else if d := e.subtree(); d != nil {
			walk(nil, d)
		}
	}
	walk = func(a, b *dirRec) {
		if a == b {
			return
		}
		pairs(a, b, func(ea, eb *entry) {
			switch {
			case ea == nil:
				came(eb)
			case eb == nil:
				gone(ea)
			case ea.listed() && eb.listed():
				if ea.FileState != eb.FileState {
					ops = append(ops, manifestOp{entry: eb.FileState})
				}
			case ea.subtree() != nil && eb.subtree() != nil:
				walk(ea.dir, eb.dir)
			default:
				gone(ea)
				came(eb)
			}
		})
	}
	walk(a, b)
	slices.SortFunc(ops, func(x, y manifestOp) int { return cmp.Compare(x.entry.Path, y.entry.Path) })
	return ops
}
