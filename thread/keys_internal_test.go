package thread

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// TestPutKeys checks that the keys and the head record an append writes
// in place into its batch are the bytes factKey, causeKey, headKey and
// encodeHead return, for seqs and kinds whose lengths differ.
func TestPutKeys(t *testing.T) {
	for _, id := range []string{"t", "a-much-longer.thread_id-0123456789"} {
		for _, seq := range []uint64{1, 127, 128, 1 << 40} {
			k := make([]byte, factKeyLen(id))
			putFactKey(k, id, seq)
			require.Equal(t, factKey(id, seq), k)

			cause := "tool/execute/call_1"
			k = make([]byte, 2+len(id)+len(cause))
			putCauseKey(k, id, cause)
			require.Equal(t, causeKey(id, cause), k)

			k = make([]byte, 1+len(id))
			putHeadKey(k, id)
			require.Equal(t, headKey(id), k)

			h := Head{Thread: id, Seq: seq, Hash: facts.Hash{1, 2}, Kind: facts.Kind(id), At: time.Unix(0, int64(seq)).UTC()}
			v := make([]byte, 2, 2+headLen(h))
			got := appendHead(v, h)
			require.Len(t, got, 2+headLen(h))
			require.Equal(t, encodeHead(h), got[2:])
			back, err := decodeHead(id, got[2:])
			require.NoError(t, err)
			require.Equal(t, h, back)
		}
	}
}
