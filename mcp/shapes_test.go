package mcp

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The hand-written checks agree with the regular expressions they
// replace, on edge cases and on random strings built from the bytes
// that matter.
func TestShapesAgreeWithRegexps(t *testing.T) {
	checks := []struct {
		name string
		re   *regexp.Regexp
		f    func(string) bool
		// alphabet the random strings are drawn from.
		alphabet string
		lengths  []int
	}{
		{"event id", regexp.MustCompile(`^[\x21-\x7e]{1,256}$`), isEventID, "\x00\x20\x21a~\x7e\x7f\x80\xff\n", []int{0, 1, 2, 255, 256, 257, 300}},
		{"protocol revision", regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`), isProtocolRevision, "0129-/:a\u0663", []int{0, 9, 10, 11, 12}},
		{"session name", regexp.MustCompile(`^[0-9a-f]{64}$`), isSessionName, "09afgA/F\n", []int{0, 63, 64, 65}},
	}
	edge := []string{"", "2025-06-18", "2025-6-18", "2025-06-18\n", "\n2025-06-18", "a", strings.Repeat("a", 64), strings.Repeat("A", 64),
		strings.Repeat("!", 256), strings.Repeat("!", 257), "abc def", "٠١٢٣-٠١-٠١", strings.Repeat("f", 63) + "\n"}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range checks {
		for _, s := range edge {
			if c.re.MatchString(s) != c.f(s) {
				t.Errorf("%s %q: regexp %v, check %v", c.name, s, c.re.MatchString(s), c.f(s))
			}
		}
		for range 20000 {
			n := c.lengths[r.IntN(len(c.lengths))]
			var b strings.Builder
			for range n {
				// Mostly the valid shape, so that matches are common.
				if r.IntN(40) == 0 {
					b.WriteByte(c.alphabet[r.IntN(len(c.alphabet))])
					continue
				}
				switch c.name {
				case "protocol revision":
					if b.Len() == 4 || b.Len() == 7 {
						b.WriteByte('-')
					} else {
						b.WriteByte(byte('0' + r.IntN(10)))
					}
				case "session name":
					b.WriteByte("0123456789abcdef"[r.IntN(16)])
				default:
					b.WriteByte(byte(0x21 + r.IntN(0x7e-0x21+1)))
				}
			}
			s := b.String()
			if c.re.MatchString(s) != c.f(s) {
				t.Fatalf("%s %q: regexp %v, check %v", c.name, s, c.re.MatchString(s), c.f(s))
			}
		}
	}
}
