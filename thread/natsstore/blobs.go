package natsstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/thread"
)

// Blobs: contents kept by digest in the object store <stream>_BLOBS, one
// object per blob, named by the SHA-256 of its bytes in lowercase hex (see
// the package comment). The object store splits each object into chunks
// that fit a message, and checks its own digest of them on reading.

// blobBucket names the blobs bucket of a stream.
func blobBucket(stream string) string { return stream + "_BLOBS" }

// blobChunk is the size of an object's chunks, below max_payload (1 MiB by
// default) with room to spare.
const blobChunk = 128 << 10

// bindBlobs opens the blobs bucket of o's stream, creating it if need be.
func bindBlobs(ctx context.Context, js jetstream.JetStream, o options) (jetstream.ObjectStore, error) {
	name := blobBucket(o.stream)
	obs, err := js.ObjectStore(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      name,
			Description: "harness kept contents of stream " + o.stream + ", by SHA-256",
			Storage:     jetstream.FileStorage,
			Replicas:    o.replicas,
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = js.ObjectStore(ctx, name) // created meanwhile by another store
		}
	}
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, "OBJ_"+name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		// The bucket was just found or made, so its stream is there: on a
		// cluster, the node that answers may not know it yet (its group
		// is still forming). Ask again, as for a leader.
		return nil, fmt.Errorf("%w: stream OBJ_%s of a bucket just bound: %w", errNoAnswerYet, name, err)
	}
	if err != nil {
		return nil, err
	}
	if err := hasLeader(st.CachedInfo()); err != nil {
		return nil, err
	}
	return obs, nil
}

// objectDigest is the object store's digest of bytes whose SHA-256 is sum.
func objectDigest(sum [sha256.Size]byte) string {
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:])
}

// PutBlob keeps data under its SHA-256 digest (lowercase hex) and returns
// the digest, as the workspace observer's Blobs asks (package action). Bytes already kept are not written again;
// an object under the digest whose size or digest is not data's is
// replaced. The blob is stored, on as many replicas as the bucket has,
// when PutBlob returns.
//
// PutBlob trusts the object's metadata: chunks damaged under metadata
// that gives the right size and digest are not repaired by putting the
// bytes again (GetBlob reports them as thread.ErrCorrupt). Checking would
// mean reading the whole blob back on every put of bytes already kept.
//
// Two stores putting the same new bytes at the same moment may both write
// them: the object store then keeps one copy, the last written, and drops
// the other's chunks. A GetBlob that began reading the dropped copy waits
// for chunks that are gone, until its context's deadline or the store's
// timeout, and fails; trying again reads the copy kept.
func (s *Store) PutBlob(ctx context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	if err := s.enter(); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	defer s.leave()
	ctx, cancel := s.requestContext(ctx)
	defer cancel()
	info, err := s.blobs.GetInfo(ctx, digest)
	switch {
	case err == nil && info.Size == uint64(len(data)) && info.Digest == objectDigest(sum):
		return digest, nil
	case err != nil && !errors.Is(err, jetstream.ErrObjectNotFound):
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	chunk := blobChunk
	if limit := int(s.nc.MaxPayload()) - headerRoom - 1024; limit > 0 && limit < chunk {
		chunk = limit
	}
	meta := jetstream.ObjectMeta{Name: digest, Opts: &jetstream.ObjectMetaOptions{ChunkSize: uint32(chunk)}}
	if _, err := s.blobs.Put(ctx, meta, bytes.NewReader(data)); err != nil {
		return "", fmt.Errorf("put blob %s: %w", digest, err)
	}
	return digest, nil
}

// GetBlob returns the bytes kept under digest, as the workspace observer's
// Blobs asks (package action). A digest with nothing kept is an error
// matching fs.ErrNotExist, a string that is not a SHA-256 digest in hex one
// matching fs.ErrInvalid. Bytes that do not hash to the digest are
// reported as thread.ErrCorrupt, never returned. A read racing with a
// second PutBlob of the same new bytes may wait for the store's timeout
// and fail (see PutBlob).
func (s *Store) GetBlob(ctx context.Context, digest string) ([]byte, error) {
	sum, err := thread.ParseBlobDigest(digest)
	if err != nil {
		return nil, fmt.Errorf("get blob %q: %w", digest, err)
	}
	digest = hex.EncodeToString(sum[:]) // lowercase, as kept
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	}
	defer s.leave()
	ctx, cancel := s.requestContext(ctx)
	defer cancel()
	data, err := s.blobs.GetBytes(ctx, digest)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil, fmt.Errorf("get blob %s: none kept: %w", digest, fs.ErrNotExist)
	case errors.Is(err, jetstream.ErrDigestMismatch):
		return nil, fmt.Errorf("get blob %s: the kept chunks do not match the object's digest: %w", digest, thread.ErrCorrupt)
	case err != nil:
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	}
	if err := thread.CheckBlob(sum, data); err != nil {
		return nil, fmt.Errorf("get blob %s: %w", digest, err)
	}
	return data, nil
}
