package present_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
)

func TestUnifiedDiff(t *testing.T) {
	cases := []struct {
		name, a, b, want string
	}{
		{"equal", "x\n", "x\n", ""},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"a new file", "", "x\ny\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"a line added at the end, no newline", "a\n", "a\nb", "--- a\n+++ b\n@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n"},
		{"far apart changes make two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, present.UnifiedDiff("a", "b", tc.a, tc.b))
		})
	}
}

// kept is a content store in memory: the contents by their digest, and
// digests whose reading fails with an error of its own.
type kept struct {
	blobs map[string][]byte
	fail  map[string]error
}

func (k kept) GetBlob(_ context.Context, digest string) ([]byte, error) {
	if err := k.fail[digest]; err != nil {
		return nil, err
	}
	b, ok := k.blobs[digest]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return b, nil
}

// put keeps text and returns its digest.
func (k kept) put(text string) string {
	sum := sha256.Sum256([]byte(text))
	d := hex.EncodeToString(sum[:])
	k.blobs[d] = []byte(text)
	return d
}

// TestDiffOf renders changes from kept contents, hostile ones among them:
// whatever the model wrote into a file or a path, the rendering is safe to
// print on a terminal (no control character but line feed and tab, no
// direction override, no line longer than the bound) and says why when it
// shows no diff.
func TestDiffOf(t *testing.T) {
	k := kept{blobs: map[string][]byte{}, fail: map[string]error{"broken": errors.New("disk on fire\x1b[2J")}}
	old, new := k.put("ttl = 60\nsize = 10\n"), k.put("ttl = 300\nsize = 10\n")
	huge := strings.Repeat("A", 100<<10)
	hugeLine := k.put("x\n" + huge + "\n")
	hugeAll := k.put(strings.Repeat("y", 2<<20) + "\n")
	cases := []struct {
		name   string
		change facts.PathChange
		kept   present.Kept
		// diff and note are strings the rendering holds ("" for none).
		diff, note []string
		noDiff     bool
	}{
		{name: "modified", change: facts.PathChange{Path: "cache.toml", Before: old, After: new}, kept: k,
			diff: []string{"--- a/cache.toml\n+++ b/cache.toml\n", "-ttl = 60\n+ttl = 300\n size = 10\n"}},
		{name: "added", change: facts.PathChange{Path: "n.txt", After: new}, kept: k,
			diff: []string{"--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+ttl = 300\n"}},
		{name: "removed", change: facts.PathChange{Path: "n.txt", Before: old}, kept: k,
			diff: []string{"--- a/n.txt\n+++ /dev/null\n", "-ttl = 60\n"}},
		{name: "mode only", change: facts.PathChange{Path: "run.sh", Before: old, After: old, BeforeMode: 0o644, AfterMode: 0o755}, kept: k,
			note: []string{"mode changed only"}, noDiff: true},
		{name: "a store that keeps nothing", change: facts.PathChange{Path: "a", Before: old, After: new},
			note: []string{"this store keeps no contents"}, noDiff: true},
		{name: "not kept", change: facts.PathChange{Path: "a", Before: old, After: "feedfacecafe0000"}, kept: k,
			note: []string{"the content feedfacecafe was not kept"}, noDiff: true},
		{name: "too large to hash, after", change: facts.PathChange{Path: "big.bin", Before: old, After: facts.StatDigestPrefix + strings.Repeat("ab", 32)}, kept: k,
			note: []string{"sha256 not computed (larger than 1 GiB", "after the change", "its content was not kept"}, noDiff: true},
		{name: "too large to hash, both sides, no store", change: facts.PathChange{Path: "big.bin", Before: facts.StatDigestPrefix + strings.Repeat("cd", 32), After: facts.StatDigestPrefix + strings.Repeat("ab", 32)},
			note: []string{"before and after the change", "known by its size and times alone"}, noDiff: true},
		{name: "a digest that is not one", change: facts.PathChange{Path: "a", Before: old, After: "\x1b[2J\x1b[H\r"}, kept: k,
			note: []string{`the content \x1b[2J\x1b[H\r was not kept`}, noDiff: true},
		{name: "a reading that fails, hostile error text", change: facts.PathChange{Path: "a", Before: "broken", After: new}, kept: k,
			note: []string{`could not be read: disk on fire\x1b[2J`}, noDiff: true},
		{name: "binary", change: facts.PathChange{Path: "b.bin", Before: old, After: k.put("a\x00b")}, kept: k,
			note: []string{"not text (19 → 3 bytes)"}, noDiff: true},
		{name: "not UTF-8", change: facts.PathChange{Path: "b.txt", Before: old, After: k.put("caf\xe9\n")}, kept: k,
			note: []string{"not text"}, noDiff: true},
		{name: "ANSI escapes in the content", change: facts.PathChange{Path: "a", Before: old, After: k.put("\x1b[2J\x1b[1;1Hall clear\n\x1b]8;;http://x\x07link\n")}, kept: k,
			diff: []string{`+\x1b[2J\x1b[1;1Hall clear` + "\n", `+\x1b]8;;http://x\x07link` + "\n"}},
		{name: "carriage return, C1 and direction overrides", change: facts.PathChange{Path: "a", Before: old, After: k.put("ok\rfake line\n\u202eevil\u202c \u009b31m\x7f\n")}, kept: k,
			diff: []string{`+ok\rfake line` + "\n", `+\u202eevil\u202c \x9b31m\x7f` + "\n"}},
		{name: "a path with a newline and an escape", change: facts.PathChange{Path: "x\n+++ b/real.go\x1b[A", Before: old, After: new}, kept: k,
			diff: []string{`--- a/x\n+++ b/real.go\x1b[A` + "\n" + `+++ b/x\n+++ b/real.go\x1b[A` + "\n@@"}},
		{name: "a huge line is cut, its length said", change: facts.PathChange{Path: "a", Before: old, After: hugeLine}, kept: k,
			diff: []string{"+x\n", fmt.Sprintf("… (%d bytes in all)\n", len(huge)+1)}},
		{name: "a huge diff is summarized", change: facts.PathChange{Path: "a", Before: old, After: hugeAll}, kept: k,
			diff: []string{"(not shown: the diff is", "after:  2097153 bytes (1 line), sha256 " + hugeAll}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := present.DiffOf(context.Background(), tc.change, tc.kept)
			require.Equal(t, tc.change.Path, d.Path)
			require.Equal(t, present.ChangeKind(tc.change), d.Change)
			for _, s := range tc.diff {
				require.Contains(t, d.Diff, s)
			}
			for _, s := range tc.note {
				require.Contains(t, d.Note, s)
			}
			if tc.noDiff {
				require.Empty(t, d.Diff)
			}
			if len(tc.note) == 0 {
				require.Empty(t, d.Note)
			}
			requireTerminalSafe(t, d.Diff)
			requireTerminalSafe(t, d.Note)
		})
	}
}

// requireTerminalSafe fails when text could act on a terminal rather than
// show, or holds a line longer than a person can read.
func requireTerminalSafe(t *testing.T, text string) {
	t.Helper()
	require.True(t, utf8.ValidString(text), "not UTF-8: %q", text)
	for i, line := range strings.Split(text, "\n") {
		require.LessOrEqual(t, len(line), 4<<10+64, "line %d is %d bytes long", i+1, len(line))
		for _, r := range line {
			bad := (r < 0x20 && r != '\t') || (r >= 0x7f && r < 0xa0) || r == 0x061c || r == 0x200e || r == 0x200f ||
				(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
			require.False(t, bad, "line %d holds %U: %q", i+1, r, line)
		}
	}
}
