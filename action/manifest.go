package action

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"reflect"
	"slices"
	"strings"
)

// A manifest is the kept listing of one observation: what action.started
// names (facts.ActionStarted.Manifest), so that a resume after a crash can
// say which paths changed while the action ran. Kept whole for every
// action, it would cost the size of the tree each time (147 bytes a file
// as JSON); so a [ManifestKeeper] keeps it as a delta against the last
// manifest it kept, and [LoadManifest] follows the deltas back to a whole
// one. Every manifest is a blob named by its digest, so a chain can only
// be read as it was written.
//
// The layout, after the header "harness.manifest.v1\x00":
//
//	kind     1 byte: 'F' whole, 'D' delta
//	hash     uvarint length, then the snapshot's Hash
//	base     for a delta: uvarint length, then the digest of the manifest
//	         it is a delta against
//	count    uvarint, then that many items in path order:
//	  op     for a delta only: '+' the path is (now) this entry, '-' the
//	         path is gone
//	  path   uvarint bytes shared with the previous item's path, then
//	         uvarint length and the rest
//	  entry  (whole manifests, and '+'): mode (uvarint, fs.FileMode),
//	         size (varint), digest (1 byte 0 then 32 bytes for lower-case
//	         hex SHA-256, else 1 byte 1, uvarint length, the string), link
//	         target (uvarint length, then the bytes)
//
// A manifest kept as JSON (a Snapshot) by earlier versions still loads.

const manifestHeader = "harness.manifest.v1\x00"

// minManifestDepth and maxManifestDepth bound how many deltas a chain
// holds before the next manifest is kept whole again (see manifestDepth).
const (
	minManifestDepth = 64
	maxManifestDepth = 1024
)

// manifestDepth is how many deltas a chain over a listing of n files may
// hold: more for a bigger tree, whose whole manifest costs more, so that
// keeping manifests costs what changed, the whole listing spread over
// many actions. A chain is also kept whole again once its deltas list as
// many entries as the tree has, so loading one costs at most about twice
// a whole manifest.
func manifestDepth(n int) int {
	return min(max(n/128, minManifestDepth), maxManifestDepth)
}

// maxManifestChain bounds the chain LoadManifest follows.
const maxManifestChain = 4096

// ManifestKeeper is an [Observer] that keeps the manifests of its own
// snapshots, as deltas against the last one it kept in the same Blobs. The
// [Boundary] uses it when its observer is one; [Workspace] is one.
type ManifestKeeper interface {
	KeepManifest(ctx context.Context, b Blobs, s Snapshot) (digest string, err error)
}

// manifestBase is the last manifest a Workspace kept.
type manifestBase struct {
	blobs  Blobs
	digest string
	hash   string
	tree   *dirRec     // the reading it lists, when it was kept from one
	files  []FileState // else the listing, sorted
	depth  int         // deltas since the last whole manifest
	ops    int         // entries in those deltas
	// recent are the last manifests kept from readings, oldest first.
	recent []keptReading
}

// keptReading is a manifest kept from a reading: the manifest under
// digest lists tree.
type keptReading struct {
	digest, hash string
	tree         *dirRec
}

// recentManifests is how many kept manifests a Workspace remembers the
// readings of (see Workspace.keptReading).
const recentManifests = 16

// listing is the base's listing, sorted.
func (m *manifestBase) listing() []FileState {
	if m.files == nil && m.tree != nil {
		return m.tree.flatten(make([]FileState, 0, m.tree.files))
	}
	return m.files
}

// sameBlobs reports whether a and b are one store.
func sameBlobs(a, b Blobs) bool {
	if a == nil || b == nil {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// KeepManifest keeps the listing of s in b and returns its digest: a delta
// against the last manifest this Workspace kept in b, when there is one
// and its chain is not too long, else the whole listing. The snapshot of
// an unchanged workspace gets the last manifest's digest again. A
// snapshot that carries its reading (the Boundary's) is compared with the
// last one as trees, at the cost of what changed.
func (w *Workspace) KeepManifest(ctx context.Context, b Blobs, s Snapshot) (string, error) {
	if b == nil {
		return "", errors.New("keep manifest: nil Blobs")
	}
	w.manMu.Lock()
	defer w.manMu.Unlock()
	m := &w.man
	if m.digest == "" && !w.manLooked {
		w.manLooked = true
		w.lastManifest(ctx, b)
	}
	tree := s.tree
	if s.Files != nil {
		tree = nil
	}
	n := len(s.Files)
	if tree != nil {
		n = tree.files
	}
	var data []byte
	depth, ops := 0, 0
	// A delta names the state it leads to and the manifest it follows:
	// it is most likely new, and a store that can keep it without
	// looking whether it has it does (see NewBlobPutter). A whole
	// manifest may well be kept already (a new process's first, of a tree
	// as the last left it), and is big: it is looked for first.
	putBlob := b.PutBlob
	if m.digest != "" && sameBlobs(m.blobs, b) && m.depth < manifestDepth(n) && m.ops < max(n, minManifestDepth) {
		var delta []manifestOp
		if tree != nil && m.tree != nil {
			if m.tree == tree && m.hash == s.Hash {
				return m.digest, nil
			}
			delta = treeOps(m.tree, tree)
		} else {
			delta = manifestOps(m.listing(), sortedFiles(s.Listing()))
		}
		if len(delta) == 0 && m.hash == s.Hash {
			w.noteManifest(ctx, m)
			return m.digest, nil
		}
		data, depth, ops = encodeDelta(m.digest, s.Hash, delta), m.depth+1, m.ops+len(delta)
		if p, ok := b.(NewBlobPutter); ok {
			putBlob = p.PutNewBlob
		}
	} else {
		data = encodeWhole(s.Hash, sortedFiles(s.Listing()))
	}
	d, err := putBlob(ctx, data)
	if err != nil {
		return "", fmt.Errorf("keep manifest: %w", err)
	}
	next := manifestBase{blobs: b, digest: d, hash: s.Hash, tree: tree, depth: depth, ops: ops, recent: m.recent}
	if tree == nil {
		next.files = sortedFiles(s.Files)
	} else {
		next.recent = append(next.recent, keptReading{digest: d, hash: s.Hash, tree: tree})
		if len(next.recent) > recentManifests {
			next.recent = slices.Delete(next.recent, 0, len(next.recent)-recentManifests)
		}
	}
	*m = next
	w.noteManifest(ctx, m)
	return d, nil
}

// keptReading returns the reading this Workspace kept the manifest digest
// of, with the hash, when it is one of the last it kept; else nil. The
// manifest under digest lists exactly that reading: a manifest is named
// by its content.
func (w *Workspace) keptReading(digest, hash string) *dirRec {
	w.manMu.Lock()
	defer w.manMu.Unlock()
	for i := len(w.man.recent) - 1; i >= 0; i-- {
		if r := w.man.recent[i]; r.digest == digest && r.hash == hash {
			return r.tree
		}
	}
	return nil
}

// keepWhole keeps the whole listing of s in b: how the Boundary keeps the
// manifest of an observer that keeps none itself.
func keepWhole(ctx context.Context, b Blobs, s Snapshot) (string, error) {
	return b.PutBlob(ctx, encodeWhole(s.Hash, sortedFiles(s.Files)))
}

// manifestOp is one item of a delta: the path is now entry, or gone.
type manifestOp struct {
	gone  bool
	entry FileState
}

// manifestOps is the delta from one sorted listing to another.
func manifestOps(old, cur []FileState) []manifestOp {
	var ops []manifestOp
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(old) && old[i].Path < cur[j].Path):
			ops = append(ops, manifestOp{gone: true, entry: FileState{Path: old[i].Path}})
			i++
		case i == len(old) || cur[j].Path < old[i].Path:
			ops = append(ops, manifestOp{entry: cur[j]})
			j++
		default:
			if old[i] != cur[j] {
				ops = append(ops, manifestOp{entry: cur[j]})
			}
			i++
			j++
		}
	}
	return ops
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendPath appends p, sharing its prefix with prev.
func appendPath(b []byte, prev, p string) []byte {
	n := 0
	for n < len(prev) && n < len(p) && prev[n] == p[n] {
		n++
	}
	b = binary.AppendUvarint(b, uint64(n))
	return appendString(b, p[n:])
}

// lowerHex is the value of each lower-case hex digit, 0xff for any other
// byte: digests are written in lower-case hex, and only those are packed.
var lowerHex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
	}
	return t
}()

// hexDigest decodes d when it is a SHA-256 in lower-case hex (64 digits).
func hexDigest(d string) (sum [32]byte, ok bool) {
	if len(d) != 64 {
		return sum, false
	}
	var bad byte
	for i := range sum {
		hi, lo := lowerHex[d[2*i]], lowerHex[d[2*i+1]]
		bad |= hi | lo
		sum[i] = hi<<4 | lo&0x0f
	}
	return sum, bad&0xf0 == 0
}

func appendEntry(b []byte, f *FileState) []byte {
	b = binary.AppendUvarint(b, uint64(f.Mode))
	b = binary.AppendVarint(b, f.Size)
	if sum, ok := hexDigest(f.Digest); ok {
		b = append(b, 0)
		b = append(b, sum[:]...)
	} else {
		b = append(b, 1)
		b = appendString(b, f.Digest)
	}
	return appendString(b, f.Link)
}

func encodeWhole(hash string, files []FileState) []byte {
	b := make([]byte, 0, len(manifestHeader)+16+len(hash)+len(files)*56)
	b = append(b, manifestHeader...)
	b = append(b, 'F')
	b = appendString(b, hash)
	b = binary.AppendUvarint(b, uint64(len(files)))
	prev := ""
	for i := range files {
		b = appendPath(b, prev, files[i].Path)
		b = appendEntry(b, &files[i])
		prev = files[i].Path
	}
	return b
}

func encodeDelta(base, hash string, ops []manifestOp) []byte {
	b := make([]byte, 0, len(manifestHeader)+16+len(hash)+len(base)+len(ops)*64)
	b = append(b, manifestHeader...)
	b = append(b, 'D')
	b = appendString(b, hash)
	b = appendString(b, base)
	b = binary.AppendUvarint(b, uint64(len(ops)))
	prev := ""
	for i := range ops {
		op := &ops[i]
		if op.gone {
			b = append(b, '-')
			b = appendPath(b, prev, op.entry.Path)
		} else {
			b = append(b, '+')
			b = appendPath(b, prev, op.entry.Path)
			b = appendEntry(b, &op.entry)
		}
		prev = op.entry.Path
	}
	return b
}

// errBadManifest: a manifest that does not decode.
var errBadManifest = errors.New("not a manifest this program reads")

// decodedManifest is one manifest of a chain.
type decodedManifest struct {
	delta bool
	hash  string
	base  string
	ops   []manifestOp // for a whole manifest, every entry
}

func (r *recReader) string() string { return string(r.bytes(r.uvarint())) }

func decodeManifest(data []byte) (decodedManifest, error) {
	var m decodedManifest
	if !strings.HasPrefix(string(data), manifestHeader) || len(data) < len(manifestHeader)+1 {
		return m, errBadManifest
	}
	r := recReader{b: data[len(manifestHeader):]}
	switch r.byte() {
	case 'F':
	case 'D':
		m.delta = true
	default:
		return m, errBadManifest
	}
	m.hash = r.string()
	if m.delta {
		m.base = r.string()
	}
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		return m, errBadManifest
	}
	m.ops = make([]manifestOp, 0, n)
	prev := ""
	for range n {
		var op manifestOp
		if m.delta {
			switch r.byte() {
			case '+':
			case '-':
				op.gone = true
			default:
				return m, errBadManifest
			}
		}
		shared := r.uvarint()
		if shared > uint64(len(prev)) {
			return m, errBadManifest
		}
		p := prev[:shared] + r.string()
		if r.bad || p == "" || (len(m.ops) > 0 && p <= prev) {
			return m, errBadManifest
		}
		op.entry.Path = p
		if !op.gone {
			op.entry.Mode = fs.FileMode(r.uvarint())
			op.entry.Size = r.varint()
			switch r.byte() {
			case 0:
				op.entry.Digest = hex.EncodeToString(r.bytes(32))
			case 1:
				op.entry.Digest = r.string()
			default:
				return m, errBadManifest
			}
			op.entry.Link = r.string()
		}
		if r.bad {
			return m, errBadManifest
		}
		m.ops = append(m.ops, op)
		prev = p
	}
	if len(r.b) != 0 {
		return m, errBadManifest
	}
	return m, nil
}

// apply returns files changed by the delta ops (both in path order).
func apply(files []FileState, ops []manifestOp) []FileState {
	out := make([]FileState, 0, len(files)+len(ops))
	i := 0
	for _, op := range ops {
		for i < len(files) && files[i].Path < op.entry.Path {
			out = append(out, files[i])
			i++
		}
		if i < len(files) && files[i].Path == op.entry.Path {
			i++
		}
		if !op.gone {
			out = append(out, op.entry)
		}
	}
	return append(out, files[i:]...)
}

// LoadManifest returns the snapshot listing kept under digest: whole, a
// chain of deltas back to a whole one, or JSON as earlier versions kept
// it. A missing blob anywhere in the chain is an error matching
// fs.ErrNotExist; anything that does not decode is an error that says so.
func LoadManifest(ctx context.Context, b Blobs, digest string) (Snapshot, error) {
	if b == nil {
		return Snapshot{}, fmt.Errorf("load manifest %s: nil Blobs", digest)
	}
	var chain []decodedManifest
	for d := digest; ; {
		if len(chain) == maxManifestChain {
			return Snapshot{}, fmt.Errorf("load manifest %s: a chain of more than %d deltas", digest, maxManifestChain)
		}
		data, err := b.GetBlob(ctx, d)
		if err != nil {
			return Snapshot{}, fmt.Errorf("load manifest %s: %w", digest, err)
		}
		if len(chain) == 0 && len(data) > 0 && data[0] == '{' {
			var s Snapshot
			if err := json.Unmarshal(data, &s); err != nil {
				return Snapshot{}, fmt.Errorf("load manifest %s: %w", digest, err)
			}
			return s, nil
		}
		m, err := decodeManifest(data)
		if err != nil {
			return Snapshot{}, fmt.Errorf("load manifest %s: %s: %w", digest, d, err)
		}
		chain = append(chain, m)
		if !m.delta {
			break
		}
		d = m.base
	}
	base := chain[len(chain)-1]
	files := make([]FileState, len(base.ops))
	for i, op := range base.ops {
		files[i] = op.entry
	}
	if len(chain) > 1 {
		// The newest delta that names a path says what it is now: apply
		// those, all in one pass over the whole listing.
		var ops []manifestOp
		seen := map[string]bool{}
		for _, m := range chain[:len(chain)-1] {
			for _, op := range m.ops {
				if !seen[op.entry.Path] {
					seen[op.entry.Path] = true
					ops = append(ops, op)
				}
			}
		}
		slices.SortFunc(ops, func(x, y manifestOp) int { return strings.Compare(x.entry.Path, y.entry.Path) })
		files = apply(files, ops)
	}
	return Snapshot{Hash: chain[0].hash, Files: files}, nil
}

// manifestNamespace is the Meta namespace where a Workspace notes the last
// manifest it kept, under its root: a new process's first manifest is
// then a delta against it, not the whole listing again (500 KB for a
// 10,000-file tree, written by every `harness run`).
const manifestNamespace = "manifest.v1"

// lastVersion is the version of a noted last manifest:
//
//	version  1 byte (1)
//	digest   uvarint length, then the manifest's digest
//	hash     uvarint length, then the snapshot hash it lists
//	depth    uvarint: deltas since the last whole manifest of its chain
//	ops      uvarint: entries in those deltas
//	crc      4 bytes, CRC-32C of the bytes before, little-endian
const lastVersion = 1

func encodeLast(m *manifestBase) []byte {
	b := make([]byte, 0, 1+2+len(m.digest)+len(m.hash)+20+4)
	b = append(b, lastVersion)
	b = appendString(b, m.digest)
	b = appendString(b, m.hash)
	b = binary.AppendUvarint(b, uint64(m.depth))
	b = binary.AppendUvarint(b, uint64(m.ops))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeLast reads a noted last manifest; ok is false for one that does
// not decode (damaged, or of another version).
func decodeLast(v []byte) (digest, hash string, depth, ops int, ok bool) {
	if len(v) < 1+4 || v[0] != lastVersion {
		return "", "", 0, 0, false
	}
	body := v[:len(v)-4]
	if binary.LittleEndian.Uint32(v[len(v)-4:]) != crc32.Checksum(body, castagnoli) {
		return "", "", 0, 0, false
	}
	r := recReader{b: body[1:]}
	digest, hash = r.string(), r.string()
	d, o := r.uvarint(), r.uvarint()
	if r.bad || len(r.b) != 0 || digest == "" || d > maxManifestChain || o > 1<<40 {
		return "", "", 0, 0, false
	}
	return digest, hash, int(d), int(o), true
}

// lastManifest makes the last manifest an earlier Workspace over this root
// noted in the stat cache's Meta the base of the next one kept in b, when
// b holds its whole chain and the chain lists the hash the note says. The
// listing is loaded from b, not taken from the note: a delta against it
// says exactly how the next listing differs from the one the chain
// lists, whatever the note claimed. A note that is damaged, names bytes
// b does not hold, or a chain that does not load, is ignored: the next
// manifest is kept whole, as with no note. manMu is held.
func (w *Workspace) lastManifest(ctx context.Context, b Blobs) {
	if w.meta == nil {
		return
	}
	v, err := w.meta.GetMeta(ctx, manifestNamespace, []byte(w.root))
	if err != nil {
		return
	}
	digest, hash, depth, ops, ok := decodeLast(v)
	if !ok {
		return
	}
	snap, err := LoadManifest(ctx, b, digest)
	if err != nil || snap.Hash != hash || !slices.IsSortedFunc(snap.Files, func(x, y FileState) int { return strings.Compare(x.Path, y.Path) }) {
		return
	}
	if snap.Files == nil {
		snap.Files = []FileState{}
	}
	w.man = manifestBase{blobs: b, digest: digest, hash: hash, files: snap.Files, depth: depth, ops: ops}
	w.manKept = digest
}

// noteManifest notes m, the manifest just kept, as the last one in the
// stat cache's Meta, when it is not the one noted already. Failing to
// note it costs the next process a whole manifest. manMu is held.
func (w *Workspace) noteManifest(ctx context.Context, m *manifestBase) {
	if w.meta == nil || m.digest == w.manKept {
		return
	}
	v := encodeLast(m)
	kv := func(yield func([]byte, []byte) bool) { yield([]byte(w.root), v) }
	if w.meta.PutMeta(context.WithoutCancel(ctx), manifestNamespace, kv) == nil {
		w.manKept = m.digest
	}
}
