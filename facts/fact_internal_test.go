package facts

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPrintableASCII checks the word-at-a-time printableASCII against a
// byte-at-a-time one: every byte value at every position of strings of
// printable bytes up to 20 long, and random strings.
func TestPrintableASCII(t *testing.T) {
	plain := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] > 0x7e {
				return false
			}
		}
		return true
	}
	buf := make([]byte, 20)
	for n := 0; n <= len(buf); n++ {
		for i := range buf {
			buf[i] = 'a' + byte(i)
		}
		for pos := 0; pos < n; pos++ {
			for c := range 256 {
				old := buf[pos]
				buf[pos] = byte(c)
				if s := string(buf[:n]); printableASCII(s) != plain(s) {
					t.Fatalf("printableASCII(%q) = %v", s, !plain(s))
				}
				buf[pos] = old
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		n := rng.IntN(len(buf) + 1)
		for i := range n {
			// Mostly printable, with the edges of the range often.
			switch rng.IntN(8) {
			case 0:
				buf[i] = byte(rng.Uint32())
			case 1:
				buf[i] = []byte{0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff, 0x00}[rng.IntN(7)]
			default:
				buf[i] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		if s := string(buf[:n]); printableASCII(s) != plain(s) {
			t.Fatalf("printableASCII(%q) = %v", s, !plain(s))
		}
	}
}

// TestHashBothWays checks Hash against its documented layout summed
// piece by piece, for payloads around the longest layout Hash sums on
// the stack and far past it: the two ways give the same hash.
func TestHashBothWays(t *testing.T) {
	layout := func(f Fact) Hash {
		d := sha256.New()
		u64 := func(v uint64) { d.Write(binary.BigEndian.AppendUint64(nil, v)) }
		d.Write([]byte(hashTag))
		u64(uint64(len(f.Thread)))
		d.Write([]byte(f.Thread))
		u64(f.Seq)
		u64(uint64(len(f.Kind)))
		d.Write([]byte(f.Kind))
		u64(uint64(len(f.Cause)))
		d.Write([]byte(f.Cause))
		u64(uint64(f.At.UnixNano()))
		u64(uint64(len(f.Data)))
		d.Write(f.Data)
		d.Write(f.Prev[:])
		return Hash(d.Sum(nil))
	}
	f := Fact{Thread: "t-1", Seq: 7, Kind: "model.turn", Cause: "infer/turn/7", At: time.Unix(1, 2).UTC(), Prev: Hash{9, 8, 7}}
	head := len(f.appendHashHead(nil))
	for _, n := range []int{0, 1, hashOnStack - head - len(f.Prev) - 1, hashOnStack - head - len(f.Prev), hashOnStack - head - len(f.Prev) + 1, 5000} {
		f.Data = make([]byte, n)
		for i := range f.Data {
			f.Data[i] = byte(i)
		}
		if got, want := f.Hash(), layout(f); got != want {
			t.Errorf("payload of %d bytes: Hash = %s, the layout sums to %s", n, got, want)
		}
	}
}
