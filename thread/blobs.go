package thread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"

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
	if _, ok, err := get(s.db, key); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	} else if ok {
		return digest, nil
	}
	if err := s.db.Set(key, data, pebble.NoSync); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	return digest, nil
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
