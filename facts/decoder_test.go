package facts_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// FuzzDecoder checks the scanning decoder against DecodeFact on arbitrary
// bytes, as they are and with a valid checksum appended: the same fact or
// the same error, one Decoder reading every input in turn (as a scan reads
// a log). The fact's Data is lent — it changes with the record's bytes —
// and nothing else is: its cause, kind and the rest stay as read.
func FuzzDecoder(f *testing.F) {
	for _, fact := range roundTripFacts(f) {
		b, err := facts.Encode(fact)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-4])
	}
	// Envelopes that only the checks after the checksum refuse (the
	// fuzzer frames them): a kind with a space, a cause with a control
	// character, seq 0, a first fact with a prev.
	good := facts.Fact{Thread: "t", Seq: 1, Kind: "a.b", Cause: "c/d", At: time.Unix(1, 0).UTC()}
	for _, bad := range []func(b []byte) []byte{
		func(b []byte) []byte { return bytes.Replace(b, []byte("a.b"), []byte("a b"), 1) },
		func(b []byte) []byte { return bytes.Replace(b, []byte("c/d"), []byte("c\x01d"), 1) },
		func(b []byte) []byte { b[1] = 0; return b },
		func(b []byte) []byte { b[len(b)-2] = 7; return b },
	} {
		b, err := facts.Encode(good)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bad(bytes.Clone(b[:len(b)-4])))
	}
	var d facts.Decoder
	f.Fuzz(func(t *testing.T, b []byte) {
		framed := binary.LittleEndian.AppendUint32(bytes.Clone(b), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
		for _, in := range [][]byte{b, framed} {
			in = bytes.Clone(in)
			want, wantErr := facts.DecodeFact("t", in)
			got, err := d.Decode("t", in)
			if wantErr != nil {
				require.EqualError(t, err, wantErr.Error())
				continue
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
			for i := range in {
				in[i] ^= 0xff
			}
			if len(got.Data) > 0 {
				require.NotEqual(t, want.Data, got.Data, "Data is lent: a slice of the record")
			}
			got.Data = want.Data
			require.Equal(t, want, got, "only Data is lent")
		}
	})
}

// TestDecoderReadsALog decodes a log of many facts with one Decoder, as a
// scan does, reusing one buffer for every record: each fact read equals
// DecodeFact's, and the causes kept from earlier records are unchanged
// after the buffer is overwritten by later ones.
func TestDecoderReadsALog(t *testing.T) {
	var d facts.Decoder
	var kept []facts.Fact
	var prev facts.Hash
	buf := make([]byte, 0, 4096)
	for i := range 3000 {
		cause := fmt.Sprintf("tool/execute/call_%d", i)
		if i%7 == 0 {
			cause = strings.Repeat("x", 600+i%300) // longer than a chunk's quarter
		}
		kind := facts.KindModelTurn
		if i%3 == 0 {
			kind = "custom.kind" // unregistered
		}
		f := facts.Fact{Thread: "t", Seq: uint64(i + 1), Kind: kind, Cause: cause, At: time.Unix(1_700_000_000+int64(i), int64(i)).UTC(), Data: []byte{byte(i), 1, 2}, Prev: prev}
		b, err := facts.Encode(f)
		require.NoError(t, err)
		buf = append(buf[:0], b...)
		got, err := d.Decode("t", buf)
		require.NoError(t, err)
		want, err := facts.DecodeFact("t", b)
		require.NoError(t, err)
		require.Equal(t, want, got)
		got.Data = want.Data // kept facts copy what was lent
		kept = append(kept, got)
		prev = f.Hash()
		clear(buf[:cap(buf)])
	}
	prev = facts.Hash{}
	for i, f := range kept {
		require.Equal(t, uint64(i+1), f.Seq)
		require.Equal(t, prev, f.Prev)
		prev = f.Hash()
	}
}

// TestAppendEncode checks that EncodedLen is the length Encode returns,
// and that AppendEncode appends exactly Encode's bytes, in place when dst
// has room: lengths that take one, two and three bytes as uvarints.
func TestAppendEncode(t *testing.T) {
	fs := roundTripFacts(t)
	for _, n := range []int{0, 1, 127, 128, 16383, 16384} {
		fs = append(fs, facts.Fact{Thread: "t", Seq: uint64(n + 2), Kind: "a.b", Cause: strings.Repeat("c", 1+n%1000),
			At: time.Unix(0, int64(n)).UTC(), Data: bytes.Repeat([]byte{7}, n), Prev: facts.Hash{byte(n | 1)}})
	}
	for _, f := range fs {
		want, err := facts.Encode(f)
		require.NoError(t, err)
		require.Len(t, want, facts.EncodedLen(f))
		dst := make([]byte, 3, 3+facts.EncodedLen(f))
		got, err := facts.AppendEncode(dst, f)
		require.NoError(t, err)
		require.Equal(t, want, got[3:])
		require.Same(t, &dst[:1][0], &got[0], "written in place")
	}
	_, err := facts.AppendEncode(nil, facts.Fact{Seq: 1, Kind: "bad kind", Cause: "c"})
	require.ErrorIs(t, err, facts.ErrInvalid)
}
