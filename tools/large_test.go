package tools_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// A write or an edit past Limits.FileBytes is refused before anyone is
// asked, and fails if run: the error names the limit and the size, and
// nothing is written — never a part of it.
func TestWriteAndEditPastTheLimitFail(t *testing.T) {
	s, root := workspace(t, map[string]string{"old.txt": "old content\n"}, tools.WithLimits(tools.Limits{FileBytes: 1000}))
	big := strings.Repeat("x", 1001)

	args := js(t, map[string]string{"path": "old.txt", "content": big})
	err := s.Precheck(tools.WriteFile, []byte(args))
	require.ErrorIs(t, err, tools.ErrTooLarge)
	require.EqualError(t, err, "write_file: content too large: the content is 1001 bytes, more than the 1000 bytes write_file writes; nothing was written, and nothing is cut to fit")
	rep := call(t, s, tools.WriteFile, args)
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Contains(t, rep.Error, "1001 bytes, more than the 1000 bytes")
	require.Equal(t, "old content\n", readFile(t, root, "old.txt"))

	full := "y" + big[:999]
	rep = call(t, s, tools.WriteFile, js(t, map[string]string{"path": "old.txt", "content": full}))
	require.Equal(t, facts.StatusSucceeded, rep.Status, "the limit itself is allowed")
	require.Equal(t, full, readFile(t, root, "old.txt"))

	rep = call(t, s, tools.EditFile, js(t, map[string]string{"path": "old.txt", "old": "y", "new": "yyy"}))
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Contains(t, rep.Error, "the file it would leave is 1002 bytes, more than the 1000 bytes edit_file writes")
	require.Equal(t, full, readFile(t, root, "old.txt"))
}

// lines is n numbered lines of width bytes each (the newline included).
func lines(n, width int) string {
	var b strings.Builder
	for i := range n {
		l := fmt.Sprintf("line %d ", i)
		b.WriteString(l + strings.Repeat("x", width-len(l)-1) + "\n")
	}
	return b.String()
}

// The case of the issue: a 9 MiB file, and a write of its first 8 MiB and
// one more line. The preview never reads a part of the file as if it were
// the whole: it does not say "+1 line", but that the last MiB goes, or —
// too long to show — the sizes, the digests and the hunk count.
func TestPreviewOfALargeFileIsNotCut(t *testing.T) {
	root := t.TempDir()
	// Nine lines of 1 MiB: every changed line is too long to show.
	old := lines(9, 1<<20)
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(old), 0o644))
	content := old[:8<<20] + "one more line\n"
	got := tools.Preview(root, tools.WriteFile, js(t, map[string]string{"path": "big.txt", "content": content}))
	require.Equal(t, fmt.Sprintf("--- a/big.txt\n+++ b/big.txt\n"+
		"(not shown: the diff is 4194367 bytes in 1 hunk, more than the 262144 bytes a preview shows)\n"+
		"  before: 9437184 bytes (9 lines), sha256 %s\n"+
		"  after:  8388622 bytes (9 lines), sha256 %s\n", sha(old), sha(content)), got)

	// Short lines: the diff of the stretch that differs is shown, with
	// its true line numbers, however long the file.
	old = lines(150000, 64)
	require.NoError(t, os.WriteFile(filepath.Join(root, "long.txt"), []byte(old), 0o644))
	content = strings.Replace(old, "line 120000 ", "LINE 120000 ", 1)
	got = tools.Preview(root, tools.WriteFile, js(t, map[string]string{"path": "long.txt", "content": content}))
	require.Contains(t, got, "@@ -119998,7 +119998,7 @@\n line 119997 ")
	require.Contains(t, got, "\n-line 120000 x")
	require.Contains(t, got, "\n+LINE 120000 x")
	require.Equal(t, 1, strings.Count(got, "@@ -"))

	// The last 16384 lines (1 MiB) go: too many to diff, and the preview
	// says which lines and both sides' sizes and digests.
	content = old[:len(old)-(1<<20)]
	got = tools.Preview(root, tools.WriteFile, js(t, map[string]string{"path": "long.txt", "content": content}))
	require.Equal(t, fmt.Sprintf("--- a/long.txt\n+++ b/long.txt\n"+
		"(not diffed: lines 133617-150000 of the old text and none after 133616 of the new differ, more than the 4000 lines a preview diffs)\n"+
		"  before: 9600000 bytes (150000 lines), sha256 %s\n"+
		"  after:  8551424 bytes (133616 lines), sha256 %s\n", sha(old), sha(content)), got)
}

// A file larger than a preview reads is not diffed from its first part:
// the preview gives the whole file's size and digest.
func TestPreviewOfAFileLargerThanAPreviewReads(t *testing.T) {
	root := t.TempDir()
	old := strings.Repeat("a", tools.PreviewBytes+1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "huge.txt"), []byte(old), 0o644))
	got := tools.Preview(root, tools.WriteFile, js(t, map[string]string{"path": "huge.txt", "content": old[:10]}))
	require.Equal(t, fmt.Sprintf("--- a/huge.txt\n+++ b/huge.txt\n"+
		"(not diffed: larger than the 33554432 bytes a preview reads)\n"+
		"  before: 33554433 bytes, sha256 %s\n"+
		"  after:  10 bytes (1 line), sha256 %s\n", sha(old), sha(old[:10])), got)
	got = tools.Preview(root, tools.EditFile, js(t, map[string]string{"path": "huge.txt", "old": "aa", "new": "b"}))
	require.Equal(t, fmt.Sprintf("(no preview: huge.txt is 33554433 bytes, sha256 %s, more than the 33554432 bytes a preview reads)", sha(old)), got)
}

// Long lines that differ only at their end, as many as a preview diffs:
// every line changed is one hunk, too long to show, and the preview is
// made in moments (lines are compared by number, not byte by byte n×m
// times: 36 GB of comparisons here).
func TestPreviewOfLongLookalikeLines(t *testing.T) {
	root := t.TempDir()
	var old, content strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&old, "%s%05d\n", strings.Repeat("x", 4096), i)
		fmt.Fprintf(&content, "%s%05d\n", strings.Repeat("x", 4096), 3000+i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "same.txt"), []byte(old.String()), 0o644))
	got := tools.Preview(root, tools.WriteFile, js(t, map[string]string{"path": "same.txt", "content": content.String()}))
	require.Contains(t, got, "(not shown: the diff is ")
	require.Contains(t, got, "in 1 hunk")
}
