package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/present"
)

// maxPreviewLines bounds the stretch of lines Preview diffs line by line,
// after the lines the two texts share at their start and end; a larger
// stretch is summarized, never cut.
const maxPreviewLines = 4000

// PreviewBytes is the most of a file Preview reads to diff it, and the
// longest content it diffs; a larger one is summarized by its size and
// SHA-256, never cut.
const PreviewBytes = 32 << 20

// maxDiffBytes bounds the text of a diff a preview shows: a longer diff is
// summarized with its hunk count, the sizes and the digests.
const maxDiffBytes = 256 << 10

// maxHashBytes bounds how much of a file a preview hashes to say its
// digest: a regular file can be as large as the disk.
const maxHashBytes = 1 << 30

// Preview shows what a write_file or edit_file call would change in the
// workspace at root, as a unified diff of the file as it is now against
// the file the call would leave. Other tools have no preview (""); a call
// that would not apply says why. Preview only reads, inside root.
//
// A preview is never a part of the truth: when a file or a content is
// larger than PreviewBytes, when the lines that differ are too many to
// diff, or when the diff is longer than a person can read, the preview
// says so and gives both sides' sizes and SHA-256 digests (and the diff's
// hunk count, when it was computed) instead of a diff.
//
// Control characters in the file, the new content or the path are shown
// escaped (see present.EscapeText), so that a line cannot hide itself or another
// on the terminal that shows the diff to a person who must approve it.
func Preview(root, tool, args string) string {
	return present.EscapeText(preview(root, tool, args))
}

func preview(root, tool, args string) string {
	var path, after string
	switch tool {
	case WriteFile:
		var a struct{ Path, Content string }
		if err := json.Unmarshal([]byte(args), &a); err != nil || a.Path == "" {
			return "(no preview: the arguments do not name a path and content)"
		}
		path, after = a.Path, a.Content
	case EditFile:
		var a struct{ Path, Old, New string }
		if err := json.Unmarshal([]byte(args), &a); err != nil || a.Path == "" {
			return "(no preview: the arguments do not name a path and an edit)"
		}
		before, err := readIn(root, a.Path)
		if err != nil {
			return "(no preview: " + err.Error() + ")"
		}
		if !before.whole {
			return fmt.Sprintf("(no preview: %s is %s, more than the %d bytes a preview reads)", present.EscapeLine(a.Path), before.describe(), PreviewBytes)
		}
		switch n := strings.Count(before.text, a.Old); {
		case a.Old == "" || n == 0:
			return "(the edit does not apply: the old text is not in " + present.EscapeLine(a.Path) + ")"
		case n > 1:
			return fmt.Sprintf("(the edit does not apply: the old text occurs %d times in %s)", n, present.EscapeLine(a.Path))
		}
		path, after = a.Path, strings.Replace(before.text, a.Old, a.New, 1)
	default:
		return ""
	}
	before, err := readIn(root, path)
	if err != nil {
		return "(no preview: " + err.Error() + ")"
	}
	shown := present.EscapeLine(path)
	from := "a/" + shown
	if !before.existed {
		from = "/dev/null"
	}
	to := "b/" + shown
	if !before.existed && after == "" {
		// An empty file where there is none is a change: the file is made.
		return "(creates " + shown + ", empty)"
	}
	if !before.whole || len(after) > PreviewBytes {
		why := fmt.Sprintf("not diffed: larger than the %d bytes a preview reads", PreviewBytes)
		return summary(from, to, why, before, sideOf(after))
	}
	if before.text == after {
		return "(no change: " + shown + " already holds this content)"
	}
	return UnifiedDiff(from, to, before.text, after)
}

// side is one side of a preview: a file as it is, or the content a call
// would leave.
type side struct {
	existed bool
	// text is the content, when whole: the file was read to its end.
	text  string
	whole bool
	size  int64
	lines int
	// sum is the SHA-256 of the whole content, hex; "" when the file is
	// larger than maxHashBytes.
	sum string
}

func sideOf(text string) side {
	sum := sha256.Sum256([]byte(text))
	return side{existed: true, text: text, whole: true, size: int64(len(text)), lines: len(splitLines(text)), sum: hex.EncodeToString(sum[:])}
}

// describe says a side's size and digest: "9437184 bytes (147456 lines),
// sha256 <hex>", or "absent".
func (s side) describe() string {
	if !s.existed {
		return "absent"
	}
	out := plural(int(s.size), "byte", "bytes")
	if s.whole {
		out += " (" + plural(s.lines, "line", "lines") + ")"
	}
	if s.sum == "" {
		return out + ", sha256 not computed (larger than 1 GiB)"
	}
	return out + ", sha256 " + s.sum
}

// summary is a preview that shows no diff: why, and both sides.
func summary(from, to, why string, before, after side) string {
	return fmt.Sprintf("--- %s\n+++ %s\n(%s)\n  before: %s\n  after:  %s\n", from, to, why, before.describe(), after.describe())
}

// readIn reads rel inside root; a missing file reads as absent. Only a
// regular file is read, opened without blocking (a FIFO named by the model
// must not hang the preview a person waits for). At most PreviewBytes of
// it are kept, and the side says whether that was all; its size and
// digest are of the whole file.
func readIn(root, rel string) (side, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return side{}, err
	}
	defer r.Close()
	f, _, err := action.OpenRegular(r, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return side{whole: true, sum: sideOf("").sum}, nil
	}
	if err != nil {
		return side{}, err
	}
	defer f.Close()
	var kept bytes.Buffer
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, &prefixKeeper{buf: &kept, limit: PreviewBytes}), io.LimitReader(f, maxHashBytes+1))
	if err != nil {
		return side{}, err
	}
	s := side{existed: true, size: n, whole: n <= PreviewBytes}
	if n <= maxHashBytes {
		s.sum = hex.EncodeToString(h.Sum(nil))
	} else if info, err := f.Stat(); err == nil {
		s.size = info.Size()
	}
	if s.whole {
		s.text = kept.String()
		s.lines = len(splitLines(s.text))
	}
	return s, nil
}

// prefixKeeper keeps the first limit bytes written to it, and takes the rest.
type prefixKeeper struct {
	buf   *bytes.Buffer
	limit int
}

func (c *prefixKeeper) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// UnifiedDiff returns the differences between two texts as a unified diff
// with three lines of context, headed by the names from and to. Equal
// texts give "". Lines the two texts share at their start and end are not
// diffed; when the stretch between is more than maxPreviewLines lines on
// either side, or the diff is longer than maxDiffBytes, the diff is not
// shown: it says so, with both texts' sizes and SHA-256 digests, and the
// hunk count when the diff was computed.
func UnifiedDiff(from, to, a, b string) string {
	if a == b {
		return ""
	}
	al, bl := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	midA, midB := al[pre:len(al)-suf], bl[pre:len(bl)-suf]
	if len(midA) > maxPreviewLines || len(midB) > maxPreviewLines {
		why := fmt.Sprintf("not diffed: lines %s of the old text and %s of the new differ, more than the %d lines a preview diffs",
			lineSpan(pre, len(midA)), lineSpan(pre, len(midB)), maxPreviewLines)
		return summary(from, to, why, sideOf(a), sideOf(b))
	}
	// Only the hunks' lines and their context are ever printed: the shared
	// lines far from a change are not made into operations.
	lo := max(0, pre-3)
	ops := make([]diffOp, 0, len(midA)+len(midB)+12)
	for i := lo; i < pre; i++ {
		ops = append(ops, diffOp{' ', al[i], i, i})
	}
	for _, op := range diffLines(midA, midB) {
		op.a, op.b = op.a+pre, op.b+pre
		ops = append(ops, op)
	}
	for i := 0; i < min(suf, 3); i++ {
		ia, ib := len(al)-suf+i, len(bl)-suf+i
		ops = append(ops, diffOp{' ', al[ia], ia, ib})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	hunks := writeHunks(&out, ops)
	if out.Len() > maxDiffBytes {
		why := fmt.Sprintf("not shown: the diff is %s in %s, more than the %d bytes a preview shows",
			plural(out.Len(), "byte", "bytes"), plural(hunks, "hunk", "hunks"), maxDiffBytes)
		return summary(from, to, why, sideOf(a), sideOf(b))
	}
	return out.String()
}

// lineSpan names n lines from the 0-based line start: "12-40", "12", or
// "none after 11".
func lineSpan(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("none after %d", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d-%d", start+1, start+n)
}

// writeHunks writes the hunks of ops, with three lines of context, and
// returns how many there are.
func writeHunks(out *strings.Builder, ops []diffOp) int {
	const ctx = 3
	hunks := 0
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is within 2*ctx of the next.
		start := max(0, i-ctx)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		end = min(len(ops), end+ctx+1)
		aStart, bStart, aN, bN := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		hunks++
		i = end
	}
	return hunks
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits s after each newline, keeping them.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
	a, b int // the line's index in a and b (for '+', a is where it goes)
}

// diffLines is a longest-common-subsequence line diff.
//
// Lines are compared as small integers, each distinct line numbered once:
// n×m comparisons of long lines that differ only at their end (a model
// can write those) would cost the preview a person waits for n×m times
// their length.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	ids := make(map[string]int32, n+m)
	number := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ai, bi := number(a), number(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ai[i] == bi[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ai[i] == bi[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
