package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
)

// ExcerptLen is about how many runes an excerpt has.
const ExcerptLen = 120

// Excerpt is a short line that shows why f matched q, escaped for a
// terminal (present.EscapeLine): the text around the first word of the
// query that f's text has, or, for a query of fields alone, the fact
// described (present.Describe).
func Excerpt(f facts.Fact, q Query) string {
	var want []string
	for _, t := range q.Terms {
		if w, ok := strings.CutPrefix(t, termWord); ok {
			want = append(want, w)
		}
	}
	if len(want) > 0 {
		var found string
		textOf(f.Data, func(s string) bool {
			if i, n := findWord(s, want); i >= 0 {
				found = window(s, i, n)
				return false
			}
			return true
		})
		if found != "" {
			return present.EscapeLine(found)
		}
	}
	return present.Clip(present.Describe(f), ExcerptLen)
}

// findWord returns where in s (its first maxTextRead bytes) the first of
// the words in want stands as a word of its own, and its length; -1 if none.
func findWord(s string, want []string) (int, int) {
	if len(s) > maxTextRead {
		s = s[:maxTextRead]
	}
	start := -1
	for i, r := range s + " " {
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			w := strings.ToLower(s[start:i])
			for _, x := range want {
				if w == x {
					return start, i - start
				}
			}
			start = -1
		}
	}
	return -1, 0
}

// window is s around [i, i+n), on one line, cut to about ExcerptLen runes
// at rune boundaries, a cut marked with "…".
func window(s string, i, n int) string {
	const before = ExcerptLen / 3
	from, to := i, i+n
	for k := 0; k < before && from > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:from])
		from -= size
	}
	for k := 0; k < ExcerptLen-before && to < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[to:])
		to += size
	}
	out := strings.Join(strings.Fields(s[from:to]), " ")
	if from > 0 {
		out = "…" + out
	}
	if to < len(s) {
		out += "…"
	}
	return out
}
