package natsstore_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// rawBlobs opens the blobs bucket of stream name directly.
func rawBlobs(t *testing.T, name string) (jetstream.JetStream, jetstream.ObjectStore) {
	t.Helper()
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	obs, err := js.ObjectStore(context.Background(), name+"_BLOBS")
	require.NoError(t, err)
	return js, obs
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestBlobs: contents round-trip by digest between two stores, including
// the empty one and one larger than a message, and storing them again
// writes nothing.
func TestBlobs(t *testing.T) {
	name, opts := freshNamed()
	a, b := dial(t, shared, opts...), dial(t, shared, opts...)
	ctx := context.Background()
	big := make([]byte, 1<<20+12345) // more than max_payload's default
	_, _ = rand.Read(big)
	for _, data := range [][]byte{[]byte("package main\n"), {}, big} {
		d, err := a.PutBlob(ctx, data)
		require.NoError(t, err)
		require.Equal(t, digestOf(data), d)
		got, err := b.GetBlob(ctx, d)
		require.NoError(t, err)
		require.Equal(t, len(data), len(got))
		require.Equal(t, data, got)
		got, err = a.GetBlob(ctx, strings.ToUpper(d))
		require.NoError(t, err, "a digest in upper case is the same digest")
		require.Equal(t, data, got)
	}

	// Again, from either store: nothing is written.
	js, obs := rawBlobs(t, name)
	stream, err := js.Stream(ctx, "OBJ_"+name+"_BLOBS")
	require.NoError(t, err)
	before, err := stream.Info(ctx)
	require.NoError(t, err)
	info, err := obs.GetInfo(ctx, digestOf(big))
	require.NoError(t, err)
	for _, s := range []interface {
		PutBlob(context.Context, []byte) (string, error)
	}{a, b} {
		d, err := s.PutBlob(ctx, big)
		require.NoError(t, err)
		require.Equal(t, digestOf(big), d)
	}
	after, err := stream.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, before.State.LastSeq, after.State.LastSeq, "nothing published")
	again, err := obs.GetInfo(ctx, digestOf(big))
	require.NoError(t, err)
	require.Equal(t, info.NUID, again.NUID)
}

// TestBlobMissing: a digest with nothing kept, and strings that are not
// digests.
func TestBlobMissing(t *testing.T) {
	s := dial(t, shared, freshStream()...)
	ctx := context.Background()
	_, err := s.GetBlob(ctx, digestOf([]byte("never kept")))
	require.ErrorIs(t, err, fs.ErrNotExist)
	for _, bad := range []string{"", "xyz", digestOf(nil)[:62], digestOf(nil) + "00", "../" + digestOf(nil)[3:]} {
		_, err := s.GetBlob(ctx, bad)
		require.ErrorIs(t, err, fs.ErrInvalid, "%q", bad)
		require.NotErrorIs(t, err, fs.ErrNotExist, "%q", bad)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.PutBlob(cancelled, []byte("x"))
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.GetBlob(cancelled, digestOf(nil))
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, s.Close())
	_, err = s.PutBlob(ctx, []byte("x"))
	require.ErrorIs(t, err, thread.ErrClosed)
	_, err = s.GetBlob(ctx, digestOf(nil))
	require.ErrorIs(t, err, thread.ErrClosed)
}

// TestBlobCorrupt: bytes kept under a digest they do not hash to, or
// chunks that do not match the object's own digest, are reported as
// ErrCorrupt and never returned; putting the right bytes again repairs
// the blob.
func TestBlobCorrupt(t *testing.T) {
	name, opts := freshNamed()
	s := dial(t, shared, opts...)
	ctx := context.Background()
	data := []byte("the right bytes")
	d, err := s.PutBlob(ctx, data)
	require.NoError(t, err)
	js, obs := rawBlobs(t, name)

	// Other bytes under the digest, consistent as an object.
	_, err = obs.PutBytes(ctx, d, []byte("other bytes"))
	require.NoError(t, err)
	got, err := s.GetBlob(ctx, d)
	require.ErrorIs(t, err, thread.ErrCorrupt)
	require.Nil(t, got)
	d2, err := s.PutBlob(ctx, data)
	require.NoError(t, err)
	require.Equal(t, d, d2)
	got, err = s.GetBlob(ctx, d)
	require.NoError(t, err)
	require.Equal(t, data, got)

	// The object's record of its digest does not match its chunks.
	info, err := obs.GetInfo(ctx, d)
	require.NoError(t, err)
	wrong := sha256.Sum256([]byte("not these"))
	info.Digest = "SHA-256=" + base64.URLEncoding.EncodeToString(wrong[:])
	meta, err := json.Marshal(info)
	require.NoError(t, err)
	m := nats.NewMsg("$O." + name + "_BLOBS.M." + base64.URLEncoding.EncodeToString([]byte(d)))
	m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	m.Data = meta
	_, err = js.PublishMsg(ctx, m)
	require.NoError(t, err)
	got, err = s.GetBlob(ctx, d)
	require.ErrorIs(t, err, thread.ErrCorrupt)
	require.ErrorContains(t, err, "object's digest")
	require.Nil(t, got)
	_, err = s.PutBlob(ctx, data)
	require.NoError(t, err)
	got, err = s.GetBlob(ctx, d)
	require.NoError(t, err)
	require.Equal(t, data, got)
}

// The store keeps the workspace observer's file contents.
var _ action.Blobs = (*natsstore.Store)(nil)
