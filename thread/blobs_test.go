package thread_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

func TestBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := thread.OpenPebble(dir)
	require.NoError(t, err)

	data := []byte("ttl_seconds = 300\n")
	sum := sha256.Sum256(data)
	d, err := s.PutBlob(ctx, data)
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(sum[:]), d)
	again, err := s.PutBlob(ctx, data)
	require.NoError(t, err)
	require.Equal(t, d, again, "the same bytes, the same blob")

	got, err := s.GetBlob(ctx, d)
	require.NoError(t, err)
	require.Equal(t, data, got)

	missing := sha256.Sum256([]byte("never kept"))
	_, err = s.GetBlob(ctx, hex.EncodeToString(missing[:]))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = s.GetBlob(ctx, "not-hex")
	require.ErrorIs(t, err, fs.ErrInvalid)

	empty, err := s.PutBlob(ctx, nil)
	require.NoError(t, err)
	got, err = s.GetBlob(ctx, empty)
	require.NoError(t, err)
	require.Empty(t, got)

	// Blobs are not threads.
	heads, err := s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Empty(t, heads)

	// Damaged bytes are reported, never returned.
	key := append([]byte{'b'}, sum[:]...)
	require.NoError(t, thread.RawDB(s).Set(key, []byte("ttl_seconds = 3000\n"), pebble.Sync))
	_, err = s.GetBlob(ctx, d)
	require.ErrorIs(t, err, thread.ErrCorrupt)

	// Kept across a reopen (a synced append makes them durable).
	d2, err := s.PutBlob(ctx, []byte("second"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = thread.OpenPebble(dir)
	require.NoError(t, err)
	defer s.Close()
	got, err = s.GetBlob(ctx, d2)
	require.NoError(t, err)
	require.Equal(t, []byte("second"), got)
}

func TestHasBlob(t *testing.T) {
	ctx := context.Background()
	s, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	big := make([]byte, 1<<20)
	big[7] = 1
	d, err := s.PutBlob(ctx, big)
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		digest string
		want   bool
	}{
		{"kept", d, true},
		{"kept, upper case", strings.ToUpper(d), true},
		{"never kept", digestOf("never kept"), false},
		// A key that starts with a kept digest's key is not that blob.
		{"a digest's neighbour", d[:62] + "00", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, err := s.HasBlob(ctx, c.digest)
			require.NoError(t, err)
			require.Equal(t, c.want, ok)
		})
	}
	_, err = s.HasBlob(ctx, "not-hex")
	require.ErrorIs(t, err, fs.ErrInvalid)

	// Flushed to a table, the blob is still found, and a second put of the
	// same bytes still writes nothing.
	require.NoError(t, thread.RawDB(s).Flush())
	ok, err := s.HasBlob(ctx, d)
	require.NoError(t, err)
	require.True(t, ok)
	again, err := s.PutBlob(ctx, big)
	require.NoError(t, err)
	require.Equal(t, d, again)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.HasBlob(cancelled, d)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Close())
	_, err = s.HasBlob(ctx, d)
	require.ErrorIs(t, err, thread.ErrClosed)
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// pairs yields the key/value pairs of kv in order.
func pairs(kv ...string) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			var v []byte
			if kv[i+1] != "<delete>" {
				v = []byte(kv[i+1])
			}
			if !yield([]byte(kv[i]), v) {
				return
			}
		}
	}
}

func TestMeta(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := thread.OpenPebble(dir)
	require.NoError(t, err)

	_, err = s.GetMeta(ctx, "observe.v1", []byte("/w\x00."))
	require.ErrorIs(t, err, fs.ErrNotExist)

	require.NoError(t, s.PutMeta(ctx, "observe.v1", pairs("/w\x00.", "root", "/w\x00a", "dir a", "/w\x00b", "dir b")))
	require.NoError(t, s.PutMeta(ctx, "other", pairs("/w\x00.", "another namespace")))
	require.NoError(t, s.PutMeta(ctx, "observe.v1", pairs("/w\x00b", "<delete>", "/w\x00a", "dir a, again")))
	require.NoError(t, s.PutMeta(ctx, "observe.v1", pairs()), "an empty batch is nothing to do")

	get := func(s *thread.PebbleStore, ns, key string) string {
		v, err := s.GetMeta(ctx, ns, []byte(key))
		if errors.Is(err, fs.ErrNotExist) {
			return "<none>"
		}
		require.NoError(t, err)
		return string(v)
	}
	check := func(s *thread.PebbleStore) {
		require.Equal(t, "root", get(s, "observe.v1", "/w\x00."))
		require.Equal(t, "dir a, again", get(s, "observe.v1", "/w\x00a"))
		require.Equal(t, "<none>", get(s, "observe.v1", "/w\x00b"), "a nil value deletes")
		require.Equal(t, "another namespace", get(s, "other", "/w\x00."), "namespaces are apart")
		require.Equal(t, "<none>", get(s, "observe.v", "1\x00/w\x00."), "a namespace is not a prefix of a key")
	}
	check(s)

	// Meta is not threads, and the store still verifies.
	heads, err := s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Empty(t, heads)

	for _, bad := range []string{"", "a\x00b", strings.Repeat("n", 256)} {
		_, err := s.GetMeta(ctx, bad, []byte("k"))
		require.ErrorIs(t, err, fs.ErrInvalid, "%q", bad)
		require.ErrorIs(t, s.PutMeta(ctx, bad, pairs("k", "v")), fs.ErrInvalid, "%q", bad)
	}

	// Kept across a reopen once something synced: an append.
	_, err = s.Append(ctx, "t1", 0, mustDraft(t))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = thread.OpenPebble(dir)
	require.NoError(t, err)
	check(s)
	require.NoError(t, s.Close())
	_, err = s.GetMeta(ctx, "observe.v1", []byte("/w\x00."))
	require.ErrorIs(t, err, thread.ErrClosed)
	require.ErrorIs(t, s.PutMeta(ctx, "observe.v1", pairs("k", "v")), thread.ErrClosed)
}

func mustDraft(t *testing.T) facts.Draft {
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/1", facts.UserMessage{Text: "hi"})
	require.NoError(t, err)
	return d
}

// BenchmarkBlobExists: is a 1 MiB blob, in a table as after a restart,
// already kept? HasBlob, which PutBlob uses, looks the key up without the
// value; the baseline is what PutBlob did before, a Get of the value
// copied out, on the same store in the same run. ratio is the baseline's
// time over HasBlob's (above 1: the check is cheaper). put-ns/op is a
// whole PutBlob of those bytes, hashing them included.
func BenchmarkBlobExists(b *testing.B) {
	ctx := context.Background()
	s, err := thread.OpenPebble(b.TempDir())
	require.NoError(b, err)
	defer s.Close()
	blob := make([]byte, 1<<20)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	d, err := s.PutBlob(ctx, blob)
	require.NoError(b, err)
	require.NoError(b, thread.RawDB(s).Flush())
	sum := sha256.Sum256(blob)
	key := append([]byte{'b'}, sum[:]...)
	var has, get, put time.Duration
	n := 0
	for b.Loop() {
		n++
		start := time.Now()
		ok, err := s.HasBlob(ctx, d)
		has += time.Since(start)
		require.NoError(b, err)
		require.True(b, ok)
		b.StopTimer()
		start = time.Now()
		v, closer, err := thread.RawDB(s).Get(key)
		require.NoError(b, err)
		_ = bytes.Clone(v)
		require.NoError(b, closer.Close())
		get += time.Since(start)
		start = time.Now()
		again, err := s.PutBlob(ctx, blob)
		put += time.Since(start)
		require.NoError(b, err)
		require.Equal(b, d, again)
		b.StartTimer()
	}
	b.ReportMetric(float64(has.Nanoseconds())/float64(n), "has-ns/op")
	b.ReportMetric(float64(get.Nanoseconds())/float64(n), "get-and-copy-ns/op")
	b.ReportMetric(float64(put.Nanoseconds())/float64(n), "put-ns/op")
	b.ReportMetric(float64(get)/float64(has), "ratio")
}
