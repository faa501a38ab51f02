package thread

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCompactionLeavesBlobValues: once a tree's worth of blobs is kept, a
// compaction that brings a few new blobs into the level holding them
// rewrites their keys, not their bytes (see separateBlobs): a session's
// few new blobs, spread over the whole key range as digests are, cost
// what they are, not the size of every blob kept. The blobs read back.
func TestCompactionLeavesBlobValues(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenPebble(dir)
	require.NoError(t, err)
	defer s.Close()
	var digests []string
	r := rand.New(rand.NewPCG(1, 2))
	put := func(n int, tag string) {
		for i := range n {
			b := make([]byte, 2000) // random: it does not compress
			for j := range b {
				b[j] = 'a' + byte(r.IntN(26))
			}
			d, err := s.PutNewBlob(ctx, append([]byte(fmt.Sprintf("%s %d ", tag, i)), b...))
			require.NoError(t, err)
			digests = append(digests, d)
		}
	}
	written := func() uint64 {
		var n uint64
		for _, l := range s.db.Metrics().Levels {
			n += l.TableBytesCompacted + l.BlobBytesCompacted
		}
		return n
	}
	compact := func() {
		require.NoError(t, s.db.Flush())
		require.NoError(t, s.db.Compact(ctx, []byte{tableBlob}, []byte{tableBlob + 1}, false))
	}
	put(3000, "file") // about 6 MB
	compact()
	before := written()
	put(10, "session")
	compact()
	again := written() - before
	require.Less(t, again, uint64(1<<20), "a compaction of 10 new blobs into 6 MB wrote %d bytes", again)
	for i, d := range digests {
		b, err := s.GetBlob(ctx, d)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(b), fmt.Sprintf("file %d ", i)) || i >= 3000, "blob %d", i)
	}
}
