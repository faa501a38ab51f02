package facts_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0xa1, 'x'}, 1<<19) // 1 MiB
	cases := sampleFacts(t)
	first := goldenFact()
	first.Seq, first.Prev = 1, facts.Hash{}
	cases = append(cases,
		first,
		facts.Fact{Thread: "t", Seq: 1, Kind: "app.ping", Cause: "k", At: time.Unix(0, 1).UTC()},
		facts.Fact{Thread: "t", Seq: 9, Kind: "app.blob", Cause: "ingress/ä✓", At: time.Unix(0, -5).UTC(), Data: big, Prev: first.Hash()},
		facts.Fact{Thread: "t", Seq: 1 << 62, Kind: "k", Cause: "c", At: time.Unix(0, 1<<62).UTC(), Prev: first.Hash()},
	)
	for _, f := range cases {
		b, err := facts.Encode(f)
		require.NoError(t, err)
		got, err := facts.DecodeFact(f.Thread, b)
		require.NoError(t, err)
		require.Equal(t, f, got)
		require.Equal(t, f.Hash(), got.Hash())
	}
}

func TestDecodeFactCopiesThePayload(t *testing.T) {
	f := goldenFact()
	b, err := facts.Encode(f)
	require.NoError(t, err)
	got, err := facts.DecodeFact(f.Thread, b)
	require.NoError(t, err)
	clear(b)
	require.Equal(t, f.Data, got.Data)
}

func TestDecodeFactReturnsUTC(t *testing.T) {
	f := goldenFact()
	f.At = f.At.In(time.FixedZone("X", -7*3600))
	b, err := facts.Encode(f)
	require.NoError(t, err)
	got, err := facts.DecodeFact(f.Thread, b)
	require.NoError(t, err)
	require.Equal(t, time.UTC, got.At.Location())
	require.True(t, f.At.Equal(got.At))
}

func TestEncodeRefusesWhatCannotBeReadBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*facts.Fact)
	}{
		{"seq 0", func(f *facts.Fact) { f.Seq = 0 }},
		{"zero time", func(f *facts.Fact) { f.At = time.Time{} }},
		{"year 2300", func(f *facts.Fact) { f.At = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"no kind", func(f *facts.Fact) { f.Kind = "" }},
		{"no cause", func(f *facts.Fact) { f.Cause = "" }},
		{"seq 1 with a prev", func(f *facts.Fact) { f.Seq = 1 }},
		{"seq 2 without a prev", func(f *facts.Fact) { f.Prev = facts.Hash{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := goldenFact()
			tc.change(&f)
			_, err := facts.Encode(f)
			require.ErrorIs(t, err, facts.ErrInvalid)
		})
	}
}

// withCRC replaces the last four bytes of b with its valid checksum, as a
// tamperer (or a bug) that keeps the frame intact would.
func withCRC(b []byte) []byte {
	out := append([]byte(nil), b[:len(b)-4]...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crc32.MakeTable(crc32.Castagnoli)))
}

func TestDecodeFactRefusesDamage(t *testing.T) {
	f := goldenFact()
	good, err := facts.Encode(f)
	require.NoError(t, err)

	t.Run("every truncation", func(t *testing.T) {
		for n := range len(good) {
			_, err := facts.DecodeFact("t1", good[:n])
			require.ErrorIs(t, err, facts.ErrCorrupt, "first %d bytes", n)
		}
	})
	t.Run("every single-bit flip", func(t *testing.T) {
		for i := range len(good) * 8 {
			b := bytes.Clone(good)
			b[i/8] ^= 1 << (i % 8)
			_, err := facts.DecodeFact("t1", b)
			require.ErrorIs(t, err, facts.ErrCorrupt, "bit %d", i)
		}
	})
	t.Run("a version from the future", func(t *testing.T) {
		b := bytes.Clone(good)
		b[0] = 2
		_, err := facts.DecodeFact("t1", withCRC(b))
		require.ErrorIs(t, err, facts.ErrVersion)
		require.NotErrorIs(t, err, facts.ErrCorrupt)
		require.ErrorContains(t, err, "version 2")
	})
	t.Run("bytes after the payload", func(t *testing.T) {
		b := append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0, 0)
		_, err := facts.DecodeFact("t1", withCRC(b))
		require.ErrorIs(t, err, facts.ErrCorrupt)
	})
	t.Run("a length past the end", func(t *testing.T) {
		b := bytes.Clone(good)
		b[2] = 0x7f // the kind's length byte
		_, err := facts.DecodeFact("t1", withCRC(b))
		require.ErrorIs(t, err, facts.ErrCorrupt)
		require.ErrorContains(t, err, "truncated in kind")
	})
	t.Run("an invalid kind under a valid checksum", func(t *testing.T) {
		b := bytes.Clone(good)
		b[3] = ' '
		_, err := facts.DecodeFact("t1", withCRC(b))
		require.ErrorIs(t, err, facts.ErrCorrupt)
		require.ErrorIs(t, err, facts.ErrInvalid)
	})
	t.Run("empty", func(t *testing.T) {
		_, err := facts.DecodeFact("t1", nil)
		require.ErrorIs(t, err, facts.ErrCorrupt)
	})
}

// TestEncodeLayoutIsStable pins version 1 of the storage format byte for
// byte, so a change to it shows up here before it meets a stored log.
func TestEncodeLayoutIsStable(t *testing.T) {
	b, err := facts.Encode(goldenFact())
	require.NoError(t, err)
	want := "01" + // version
		"02" + // seq
		"0c" + hexOf("user.message") +
		"0a" + hexOf("ingress/k1") +
		"1816c11eeef33206" + // 2025-01-02T03:04:05.000000006Z in Unix ns
		strings.Repeat("ab", 32) +
		"09" + "81a474657874a26869" // {"text":"hi"}
	require.Equal(t, want, hexString(b[:len(b)-4]))
}

func hexOf(s string) string { return hexString([]byte(s)) }

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	var sb strings.Builder
	for _, c := range b {
		sb.WriteByte(digits[c>>4])
		sb.WriteByte(digits[c&15])
	}
	return sb.String()
}
