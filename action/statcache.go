package action

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io/fs"
	"iter"
	"slices"
	"strings"
)

// Meta is a small key/value space that a store may offer beside its blobs,
// for what the runtime keeps and may lose: the [Workspace]'s stat cache.
// Nothing in it is a fact; whoever reads a value checks it. The Pebble
// store implements it (in a key table of its own); a store that does not
// simply leaves each new process to read every file once.
type Meta interface {
	// GetMeta returns the value kept under key in namespace ns, or an
	// error matching fs.ErrNotExist when there is none.
	GetMeta(ctx context.Context, ns string, key []byte) ([]byte, error)
	// PutMeta sets every key that kv yields, in namespace ns, to its
	// value, all at once; a nil value deletes the key. The write need not
	// be durable on its own.
	PutMeta(ctx context.Context, ns string, kv iter.Seq2[[]byte, []byte]) error
}

// BlobChecker is a [Blobs] that can tell whether it keeps a digest without
// reading the bytes. A Workspace uses it to learn that a file its stat
// cache vouches for is already kept, instead of reading the file again.
type BlobChecker interface {
	HasBlob(ctx context.Context, digest string) (bool, error)
}

// NewBlobPutter is a [Blobs] that can keep bytes without first looking
// whether it keeps them already. The observer uses it for bytes that are
// most likely new — a file's new content, small enough to hash and write
// again cheaply, and a manifest delta — where that look costs more than
// it spares. Keeping bytes kept already must change nothing but the
// write's cost; where nothing may be written (a disk without room), bytes
// kept already must still be accepted, as PutBlob accepts them.
type NewBlobPutter interface {
	PutNewBlob(ctx context.Context, data []byte) (digest string, err error)
}

// statNamespace is the Meta namespace of the stat cache; its key is the
// workspace root, 0x00, and the directory's path relative to it ("." for
// the root).
const statNamespace = "observe.v1"

// recVersion is the version of a kept directory record (a record of
// another version is ignored: version 1 had no device in its keys):
//
//	version   1 byte (2)
//	key       the directory's size, mtime, ctime (varints), inode, device (uvarints)
//	flags     1 byte: 1 the listing was clean
//	count     uvarint, then that many entries, sorted by name:
//	  name    uvarint length, then the bytes
//	  kind    1 byte: 'f' file, 'l' link, 'd' directory, 'o' other
//	  flags   1 byte: 1 clean, 2 kept, 4 more than one link, 8 out of scope,
//	          16 a stat digest (version 3 only)
//	  key     size, mtime, ctime (varints), inode, device (uvarints)
//	  mode    uvarint: the fs.FileMode
//	  for a file or link in scope: size (varint), digest (32 bytes; none
//	  for a stat digest, which is the key's: see statDigest);
//	  for a link, also its target: uvarint length, then the bytes
//	crc       4 bytes, CRC-32C (Castagnoli) of the bytes before, little-endian
//
// A record with a file known by its stat digest alone is written as
// version 3 (recStatVersion), any other as version 2, so that a process
// that knows no stat digest ignores only the records that have one.
const recVersion = 2

// recStatVersion is the version of a record with a stat digest in it.
const recStatVersion = 3

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (w *Workspace) recKey(rel string) []byte {
	k := make([]byte, 0, len(w.root)+1+len(rel))
	k = append(k, w.root...)
	k = append(k, 0)
	return append(k, rel...)
}

// loadRec returns the record an earlier observation kept of the directory
// rel, or nil when there is none that decodes.
func (w *Workspace) loadRec(ctx context.Context, rel string) *dirRec {
	v, err := w.meta.GetMeta(ctx, statNamespace, w.recKey(rel))
	if err != nil {
		return nil
	}
	r, err := decodeRec(rel, v)
	if err != nil {
		return nil
	}
	return r
}

// persist keeps the records the walk wk changed, and drops those of the
// directories it found gone. A store that fails costs only what it would
// have saved.
func (w *Workspace) persist(ctx context.Context, wk *walk) {
	if len(wk.puts) == 0 && len(wk.forgets) == 0 {
		return
	}
	kv := func(yield func([]byte, []byte) bool) {
		for _, rel := range wk.forgets {
			if !yield(w.recKey(rel), nil) {
				return
			}
		}
		for _, p := range wk.puts {
			if !yield(w.recKey(p.rel), encodeRec(p.rec)) {
				return
			}
		}
	}
	_ = w.meta.PutMeta(context.WithoutCancel(ctx), statNamespace, kv)
}

const (
	flagClean = 1 << iota
	flagKept
	flagMulti
	flagSkip
	flagStat
)

func appendKey(b []byte, k statKey) []byte {
	b = binary.AppendVarint(b, k.size)
	b = binary.AppendVarint(b, k.mtime)
	b = binary.AppendVarint(b, k.ctime)
	b = binary.AppendUvarint(b, k.ino)
	return binary.AppendUvarint(b, k.dev)
}

func encodeRec(r *dirRec) []byte {
	b := make([]byte, 0, 64+len(r.ents)*80)
	version := byte(recVersion)
	if slices.ContainsFunc(r.ents, func(e entry) bool { return e.kind == kindFile && !e.skip && isStatDigest(e.Digest) }) {
		version = recStatVersion
	}
	b = append(b, version)
	b = appendKey(b, r.key)
	var f byte
	if r.clean {
		f |= flagClean
	}
	b = append(b, f)
	b = binary.AppendUvarint(b, uint64(len(r.ents)))
	for i := range r.ents {
		e := &r.ents[i]
		b = binary.AppendUvarint(b, uint64(len(e.name)))
		b = append(b, e.name...)
		b = append(b, e.kind)
		var f byte
		if e.clean {
			f |= flagClean
		}
		if e.kept {
			f |= flagKept
		}
		if e.multi {
			f |= flagMulti
		}
		if e.skip {
			f |= flagSkip
		}
		stat := e.kind == kindFile && !e.skip && isStatDigest(e.Digest)
		if stat {
			f |= flagStat
		}
		b = append(b, f)
		b = appendKey(b, e.key)
		b = binary.AppendUvarint(b, uint64(e.Mode))
		if !e.skip && (e.kind == kindFile || e.kind == kindLink) {
			b = binary.AppendVarint(b, e.Size)
			if !stat {
				sum, _ := hex.DecodeString(e.Digest)
				b = append(b, sum...)
			}
			if e.kind == kindLink {
				b = binary.AppendUvarint(b, uint64(len(e.Link)))
				b = append(b, e.Link...)
			}
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// errBadRec: a kept record that does not decode; it is ignored.
var errBadRec = errors.New("damaged stat cache record")

// recReader reads a record's fields, remembering the first failure.
type recReader struct {
	b   []byte
	bad bool
}

func (r *recReader) byte() byte {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *recReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *recReader) key() statKey {
	return statKey{size: r.varint(), mtime: r.varint(), ctime: r.varint(), ino: r.uvarint(), dev: r.uvarint()}
}

func decodeRec(rel string, v []byte) (*dirRec, error) {
	if len(v) < 1+4 || v[0] != recVersion && v[0] != recStatVersion {
		return nil, errBadRec
	}
	body := v[:len(v)-4]
	if binary.LittleEndian.Uint32(v[len(v)-4:]) != crc32.Checksum(body, castagnoli) {
		return nil, errBadRec
	}
	r := recReader{b: body[1:]}
	rec := &dirRec{key: r.key(), clean: r.byte()&flagClean != 0}
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		return nil, errBadRec
	}
	rec.ents = make([]entry, 0, n)
	for range n {
		name := string(r.bytes(r.uvarint()))
		e := entry{name: name, kind: r.byte()}
		f := r.byte()
		e.clean, e.kept, e.multi, e.skip = f&flagClean != 0, f&flagKept != 0, f&flagMulti != 0, f&flagSkip != 0
		stat := f&flagStat != 0
		if stat && (v[0] != recStatVersion || e.kind != kindFile || e.skip || e.kept) {
			return nil, errBadRec
		}
		e.key = r.key()
		e.FileState = FileState{Path: join(rel, name), Mode: fs.FileMode(r.uvarint())}
		switch e.kind {
		case kindFile, kindLink, kindDir, kindOther:
		default:
			return nil, errBadRec
		}
		if !e.skip && (e.kind == kindFile || e.kind == kindLink) {
			e.Size = r.varint()
			if stat {
				// The digest is the key's, which cannot disagree with it.
				e.Digest = statDigest(e.key)
			} else {
				e.Digest = hex.EncodeToString(r.bytes(32))
			}
			if e.kind == kindLink {
				e.Link = string(r.bytes(r.uvarint()))
			}
		}
		if !e.skip && e.kind == kindOther {
			e.Digest = SpecialDigest(e.Mode) // the mode's: nothing more is kept
		}
		if r.bad || name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") ||
			(len(rec.ents) > 0 && rec.ents[len(rec.ents)-1].name >= name) {
			return nil, errBadRec
		}
		rec.ents = append(rec.ents, e)
	}
	if r.bad || len(r.b) != 0 {
		return nil, errBadRec
	}
	// A record read alone lacks its subdirectories' records, which its
	// digest covers: it is hashed when the walk has linked them (every
	// kept record a walk starts from is walked whole, see assemble), and
	// only if it is kept as it was.
	rec.derive(0)
	rec.unhashed = true
	return rec, nil
}
