package present

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/facts"
)

// maxDiffLines bounds the stretch of lines UnifiedDiff diffs line by line,
// after the lines the two texts share at their start and end; a larger
// stretch is summarized, never cut.
const maxDiffLines = 4000

// maxDiffBytes bounds the text of a diff: a longer diff is summarized with
// its hunk count, the sizes and the digests.
const maxDiffBytes = 256 << 10

// maxDiffLineBytes bounds one line of a diff as PathDiff shows it: a longer
// line is cut, with its whole length said (see Clip), so that one line a
// model wrote cannot fill a person's screen.
const maxDiffLineBytes = 4 << 10

// Kept reads the contents a store kept, by digest (action.Blobs is one).
// An error that is fs.ErrNotExist means the store kept nothing under it.
type Kept interface {
	GetBlob(ctx context.Context, digest string) ([]byte, error)
}

// FileDiff is one path an action changed, as a person reads it: the kind
// of change, and the diff of the contents the store kept or a note that
// says why there is none. Diff and Note are terminal-safe (escaped as
// EscapeText does, each diff line bounded); Path is as recorded, for the
// caller to escape where it prints it. A page escapes all three for HTML
// as it does any text.
type FileDiff struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	// Diff is the unified diff of the kept contents ("" when they were
	// not kept, or are not text).
	Diff string `json:"diff,omitempty"`
	// Note says why there is no diff.
	Note string `json:"note,omitempty"`
}

// DiffOf renders the change c from the contents kept holds (nil: a store
// that keeps none). It is the one rendering of a changed path, for the
// terminal and the page alike; it never fails: what it cannot show, its
// note says.
func DiffOf(ctx context.Context, c facts.PathChange, kept Kept) FileDiff {
	d := FileDiff{Path: c.Path, Change: ChangeKind(c)}
	if c.Before == c.After {
		if c.ModeChanged() {
			d.Note = "mode changed only"
		}
		return d
	}
	if n := statNote(c); n != "" {
		d.Note = n
		return d
	}
	if n := specialNote(c); n != "" {
		d.Note = n
		return d
	}
	if kept == nil {
		d.Note = "this store keeps no contents"
		return d
	}
	var before, after []byte
	for _, side := range []struct {
		digest string
		into   *[]byte
	}{{c.Before, &before}, {c.After, &after}} {
		if side.digest == "" {
			continue
		}
		b, err := kept.GetBlob(ctx, side.digest)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.Note = EscapeLine(fmt.Sprintf("the content %s was not kept (too large, or never read)", shortDigest(side.digest)))
			return d
		case err != nil:
			d.Note = EscapeLine(fmt.Sprintf("the content %s could not be read: %v", shortDigest(side.digest), err))
			return d
		}
		*side.into = b
	}
	if !utf8.Valid(before) || !utf8.Valid(after) || bytes.IndexByte(before, 0) >= 0 || bytes.IndexByte(after, 0) >= 0 {
		d.Note = fmt.Sprintf("not text (%d → %d bytes)", len(before), len(after))
		return d
	}
	shown := EscapeLine(c.Path)
	from, to := "a/"+shown, "b/"+shown
	if c.Before == "" {
		from = "/dev/null"
	}
	if c.After == "" {
		to = "/dev/null"
	}
	d.Diff = boundLines(EscapeText(UnifiedDiff(from, to, string(before), string(after))), maxDiffLineBytes)
	return d
}

// statNote says which sides of c the observer knew by their stat record
// alone (see facts.StatDigestPrefix), or "" when neither: such a file was
// never read, so no diff of it can be shown.
func statNote(c facts.PathChange) string {
	var sides []string
	if facts.IsStatDigest(c.Before) {
		sides = append(sides, "before")
	}
	if facts.IsStatDigest(c.After) {
		sides = append(sides, "after")
	}
	if len(sides) == 0 {
		return ""
	}
	return "sha256 not computed (larger than 1 GiB, the observer's hash limit unless set otherwise) " +
		strings.Join(sides, " and ") + " the change: the file is known by its size and times alone, and its content was not kept"
}

// specialNote says which sides of c are special files (a FIFO, socket or
// device: see facts.SpecialDigestPrefix), or "" when neither: such a file
// has no content to show.
func specialNote(c facts.PathChange) string {
	var sides []string
	for _, s := range []struct{ side, digest string }{{"before", c.Before}, {"after", c.After}} {
		if k := facts.SpecialKind(s.digest); k != "" {
			sides = append(sides, "a "+k+" "+s.side+" the change")
		}
	}
	if len(sides) == 0 {
		return ""
	}
	return strings.Join(sides, ", ") + ": no content (opening a FIFO waits for a writer)"
}

// boundLines cuts each line of text longer than n bytes (see Clip).
func boundLines(text string, n int) string {
	lines := strings.SplitAfter(text, "\n")
	cut := false
	for i, l := range lines {
		if len(l) > n {
			nl := strings.HasSuffix(l, "\n")
			l = Clip(strings.TrimSuffix(l, "\n"), n)
			if nl {
				l += "\n"
			}
			lines[i], cut = l, true
		}
	}
	if !cut {
		return text
	}
	return strings.Join(lines, "")
}

// DiffSide is one side of a diff that was not shown, as its summary
// describes it: a file as it is, or a content.
type DiffSide struct {
	// Existed is false for a file that is not there.
	Existed bool
	// Whole is true when the content was read to its end; Lines counts
	// its lines then.
	Whole bool
	Size  int64
	Lines int
	// SHA256 is the digest of the whole content, hex; "" when it was not
	// computed.
	SHA256 string
}

// SideOf is the side of a whole text.
func SideOf(text string) DiffSide {
	sum := sha256.Sum256([]byte(text))
	return DiffSide{Existed: true, Whole: true, Size: int64(len(text)), Lines: len(splitLines(text)), SHA256: hex.EncodeToString(sum[:])}
}

// String says a side's size and digest: "9437184 bytes (147456 lines),
// sha256 <hex>", or "absent".
func (s DiffSide) String() string {
	if !s.Existed {
		return "absent"
	}
	out := plural(int(s.Size), "byte", "bytes")
	if s.Whole {
		out += " (" + plural(s.Lines, "line", "lines") + ")"
	}
	if s.SHA256 == "" {
		return out + ", sha256 not computed (larger than 1 GiB)"
	}
	return out + ", sha256 " + s.SHA256
}

// DiffSummary is a diff that is not shown, headed by the names from and
// to: why, and both sides.
func DiffSummary(from, to, why string, before, after DiffSide) string {
	return fmt.Sprintf("--- %s\n+++ %s\n(%s)\n  before: %s\n  after:  %s\n", from, to, why, before, after)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// UnifiedDiff returns the differences between two texts as a unified diff
// with three lines of context, headed by the names from and to. Equal
// texts give "". Lines the two texts share at their start and end are not
// diffed; when the stretch between is more than maxDiffLines lines on
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
	if len(midA) > maxDiffLines || len(midB) > maxDiffLines {
		why := fmt.Sprintf("not diffed: lines %s of the old text and %s of the new differ, more than the %d lines a preview diffs",
			lineSpan(pre, len(midA)), lineSpan(pre, len(midB)), maxDiffLines)
		return DiffSummary(from, to, why, SideOf(a), SideOf(b))
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
		return DiffSummary(from, to, why, SideOf(a), SideOf(b))
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
