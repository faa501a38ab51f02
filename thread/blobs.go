package thread

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"

	"github.com/cockroachdb/pebble/v2"
)

// Blobs: contents kept by digest, beside the threads (see the key schema
// in doc.go: 'b' followed by the 32-byte SHA-256). The workspace observer
// keeps the files it reads here, so a replay can show what an action
// changed and an undo can restore it. A blob is immutable and shared by
// every thread that saw the same bytes.

const tableBlob = 'b'

func blobKey(sum [32]byte) []byte { return append([]byte{tableBlob}, sum[:]...) }

// ParseBlobDigest reads the digest a blob is kept under: a SHA-256 in hex,
// either case. Anything else is an error matching fs.ErrInvalid.
func ParseBlobDigest(digest string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	raw, err := hex.DecodeString(digest)
	if err != nil || len(raw) != sha256.Size {
		return sum, fmt.Errorf("not a SHA-256 digest in hex: %w", fs.ErrInvalid)
	}
	copy(sum[:], raw)
	return sum, nil
}

// CheckBlob returns an error matching ErrCorrupt if data, kept under the
// digest sum, does not hash to it: a store never returns such bytes.
func CheckBlob(sum [sha256.Size]byte, data []byte) error {
	if got := sha256.Sum256(data); got != sum {
		return fmt.Errorf("the kept bytes hash to %x: %w", got, ErrCorrupt)
	}
	return nil
}

// PutBlob keeps data under its SHA-256 digest (lower-case hex) and returns
// the digest; keeping the same bytes again writes nothing.
//
// The write is not synced on its own: Pebble's log is sequential, so the
// next synced append — the action.started that follows an observation —
// makes it durable together with everything before it. A blob whose
// action never got that far may be lost in a crash, and then nothing
// refers to it.
func (s *PebbleStore) PutBlob(ctx context.Context, data []byte) (string, error) {
	return s.putBlob(ctx, data, true)
}

// PutNewBlob is PutBlob for bytes the caller expects not to be kept yet
// (a file's new content, small enough to write again cheaply; a manifest
// delta, which names the state it leads to): it writes them without first
// looking whether they are kept, which costs a seek in every memtable and
// level that most often finds nothing. Bytes that were kept already are
// written again — the same value under the same key, which changes
// nothing the store holds. When nothing may be written (a disk without
// room, a store opened read-only) it looks after all, as PutBlob does:
// bytes kept already need no room.
func (s *PebbleStore) PutNewBlob(ctx context.Context, data []byte) (string, error) {
	return s.putBlob(ctx, data, false)
}

// putBlob keeps data, first looking whether it is kept when look is set;
// either way, bytes kept already need no room.
func (s *PebbleStore) putBlob(ctx context.Context, data []byte, look bool) (string, error) {
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	if err := s.enter(); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	defer s.leave()
	key := blobKey(sum)
	if look {
		if ok, err := has(s.db, key); err != nil {
			return "", fmt.Errorf("put blob %s: %w", digest, err)
		} else if ok {
			return digest, nil
		}
	}
	if err := s.writable(); err != nil {
		if !look {
			if ok, herr := has(s.db, key); herr != nil {
				return "", fmt.Errorf("put blob %s: %w", digest, errors.Join(err, herr))
			} else if ok {
				return digest, nil
			}
		}
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	if err := s.db.Set(key, data, pebble.NoSync); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	return digest, nil
}

// HasBlob reports whether bytes are kept under digest, without reading
// them. A digest that is not a SHA-256 in hex is an error matching
// fs.ErrInvalid.
func (s *PebbleStore) HasBlob(ctx context.Context, digest string) (bool, error) {
	sum, err := ParseBlobDigest(digest)
	if err != nil {
		return false, fmt.Errorf("has blob %q: %w", digest, err)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("has blob %s: %w", digest, err)
	}
	if err := s.enter(); err != nil {
		return false, fmt.Errorf("has blob %s: %w", digest, err)
	}
	defer s.leave()
	ok, err := has(s.db, blobKey(sum))
	if err != nil {
		return false, fmt.Errorf("has blob %s: %w", digest, err)
	}
	return ok, nil
}

// has reports whether key is in db without reading its value: a prefix
// seek, which the bloom filters answer without a data block for most
// absent keys, and whose Key never fetches or copies the value (a blob can
// be a MiB; the old PutBlob copied it only to learn it was there).
//
// The bottom level's filters too: Pebble skips them by default, expecting
// a key looked for there to be found, so each absent blob (every new
// file's bytes) cost a data block read from the last level.
func has(db *pebble.DB, key []byte) (bool, error) {
	it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return false, err
	}
	found := it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key)
	return found, errors.Join(it.Error(), it.Close())
}

// GetBlob returns the bytes kept under digest, or an error matching
// fs.ErrNotExist. Bytes that do not hash to the digest are reported as
// ErrCorrupt, never returned.
func (s *PebbleStore) GetBlob(ctx context.Context, digest string) ([]byte, error) {
	sum, err := ParseBlobDigest(digest)
	if err != nil {
		return nil, fmt.Errorf("get blob %q: %w", digest, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	}
	defer s.leave()
	data, ok, err := get(s.db, blobKey(sum))
	switch {
	case err != nil:
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	case !ok:
		return nil, fmt.Errorf("get blob %s: none kept: %w", digest, fs.ErrNotExist)
	}
	if err := CheckBlob(sum, data); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	}
	return data, nil
}

// Meta: a small key/value space beside the threads and blobs, in which the
// runtime keeps what it may lose (see the key schema in doc.go: 'k', the
// namespace, 0x00, the key). The workspace observer keeps its stat cache
// here, so a new process need not read every file again. Nothing in it is
// a fact: a value may be stale, and whoever reads it checks it.

const tableKV = 'k'

// maxMetaNamespace bounds a namespace's length.
const maxMetaNamespace = 255

// metaPrefix returns 'k' ns 0x00, after checking ns.
func metaPrefix(ns string) ([]byte, error) {
	if ns == "" || len(ns) > maxMetaNamespace || bytes.IndexByte([]byte(ns), sep) >= 0 {
		return nil, fmt.Errorf("meta namespace %q: want 1 to %d bytes without NUL: %w", ns, maxMetaNamespace, fs.ErrInvalid)
	}
	k := make([]byte, 0, 2+len(ns)+64)
	k = append(k, tableKV)
	k = append(k, ns...)
	return append(k, sep), nil
}

// GetMeta returns the value kept under key in namespace ns, or an error
// matching fs.ErrNotExist when there is none.
func (s *PebbleStore) GetMeta(ctx context.Context, ns string, key []byte) ([]byte, error) {
	prefix, err := metaPrefix(ns)
	if err != nil {
		return nil, fmt.Errorf("get meta: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("get meta %s: %w", ns, err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("get meta %s: %w", ns, err)
	}
	defer s.leave()
	v, ok, err := get(s.db, append(prefix, key...))
	switch {
	case err != nil:
		return nil, fmt.Errorf("get meta %s: %w", ns, err)
	case !ok:
		return nil, fmt.Errorf("get meta %s %q: none kept: %w", ns, key, fs.ErrNotExist)
	}
	return v, nil
}

// PutMeta sets every key that kv yields, in namespace ns, to its value, in
// one batch: all or nothing. A nil value deletes the key.
//
// The batch is not synced: like a blob, it becomes durable with the next
// synced append, and one lost in a crash costs only what it saved.
func (s *PebbleStore) PutMeta(ctx context.Context, ns string, kv iter.Seq2[[]byte, []byte]) error {
	prefix, err := metaPrefix(ns)
	if err != nil {
		return fmt.Errorf("put meta: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put meta %s: %w", ns, err)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("put meta %s: %w", ns, err)
	}
	defer s.leave()
	if err := s.writable(); err != nil {
		return fmt.Errorf("put meta %s: %w", ns, err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	for k, v := range kv {
		key := append(prefix[:len(prefix):len(prefix)], k...)
		if v == nil {
			err = b.Delete(key, nil)
		} else {
			err = b.Set(key, v, nil)
		}
		if err != nil {
			return fmt.Errorf("put meta %s: %w", ns, err)
		}
	}
	if b.Empty() {
		return nil
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("put meta %s: %w", ns, err)
	}
	return nil
}
