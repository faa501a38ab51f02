package facts

import (
	"math/rand/v2"
	"testing"
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
