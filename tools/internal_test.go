package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatchSegments(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		match         bool
	}{
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"*.go", "a.go", true},
		{"*.go", "a/b.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "a/b/c.go/d", false},
		{"a/**", "a/b", true},
		{"a/**", "b/a/c", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
		{"**/b/**", "a/b/c", true},
		{"**/b/**", "b/c", true},
		{"**/b/**", "a/c", false},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"[ab].txt", "b.txt", true},
		{"[^ab].txt", "b.txt", false},
		{"a*b", "a/b", false},
	} {
		t.Run(tc.pattern+" "+tc.path, func(t *testing.T) {
			require.Equal(t, tc.match, matchSegments(strings.Split(tc.pattern, "/"), strings.Split(tc.path, "/")))
		})
	}
}

func TestCouldMatchUnder(t *testing.T) {
	for _, tc := range []struct {
		pattern, dir string
		descend      bool
	}{
		{"*.go", "a", false},
		{"**/*.go", "a/b", true},
		{"a/*/c.go", "a", true},
		{"a/*/c.go", "a/b", true},
		{"a/*/c.go", "a/b/c", false},
		{"a/*/c.go", "x", false},
		{"a/**", "a/b/c", true},
	} {
		t.Run(tc.pattern+" "+tc.dir, func(t *testing.T) {
			require.Equal(t, tc.descend, couldMatchUnder(strings.Split(tc.pattern, "/"), strings.Split(tc.dir, "/")))
		})
	}
}

func TestLiteralPrefix(t *testing.T) {
	for pattern, want := range map[string]string{
		"**":            ".",
		"*.go":          ".",
		"a.go":          ".",
		"cmd/x/*.go":    "cmd/x",
		"cmd/*/main.go": "cmd",
		"a/b/c.go":      "a/b",
		"a/[b]/c":       "a",
	} {
		require.Equal(t, want, literalPrefix(strings.Split(pattern, "/")), pattern)
	}
}

func TestCapped(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		writes []string
		want   string
		cut    int64
	}{
		{"empty", 8, nil, "", 0},
		{"fits", 8, []string{"abc", "de"}, "abcde", 0},
		{"exactly", 8, []string{"abcdefgh"}, "abcdefgh", 0},
		{"one over", 8, []string{"abcdefghi"}, "abcd\n… [1 byte cut] …\nfghi", 1},
		{"byte by byte", 4, strings.Split("0123456789", ""), "01\n… [6 bytes cut] …\n89", 6},
		{"a long tail is trimmed", 4, []string{"ab", strings.Repeat("x", 1000), "yz"}, "ab\n… [1000 bytes cut] …\nyz", 1000},
		{"head ends inside a rune", 6, []string{"aaé" + strings.Repeat("b", 10)}, "aa\n… [9 bytes cut] …\nbbb", 9},
		{"tail starts inside a rune", 6, []string{strings.Repeat("b", 10) + "éé"}, "bbb\n… [9 bytes cut] …\né", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &capped{limit: tc.limit}
			var total int
			for _, w := range tc.writes {
				n, err := c.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
				total += n
			}
			require.Equal(t, tc.want, c.String())
			require.Equal(t, tc.cut, c.cut())
			require.Equal(t, int64(total), c.total)
		})
	}
}
