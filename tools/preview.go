package tools

import (
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

// maxPreviewLines bounds the files Preview diffs line by line; larger ones
// are summarized by size.
const maxPreviewLines = 4000

// Preview shows what a write_file or edit_file call would change in the
// workspace at root, as a unified diff of the file as it is now against
// the file the call would leave. Other tools have no preview (""); a call
// that would not apply says why. Preview only reads, inside root.
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
		before, _, err := readIn(root, a.Path)
		if err != nil {
			return "(no preview: " + err.Error() + ")"
		}
		switch n := strings.Count(before, a.Old); {
		case a.Old == "" || n == 0:
			return "(the edit does not apply: the old text is not in " + present.EscapeLine(a.Path) + ")"
		case n > 1:
			return fmt.Sprintf("(the edit does not apply: the old text occurs %d times in %s)", n, present.EscapeLine(a.Path))
		}
		path, after = a.Path, strings.Replace(before, a.Old, a.New, 1)
	default:
		return ""
	}
	before, existed, err := readIn(root, path)
	if err != nil {
		return "(no preview: " + err.Error() + ")"
	}
	shown := present.EscapeLine(path)
	from := "a/" + shown
	if !existed {
		from = "/dev/null"
	}
	if !existed && after == "" {
		// An empty file where there is none is a change: the file is made.
		return "(creates " + shown + ", empty)"
	}
	if before == after {
		return "(no change: " + shown + " already holds this content)"
	}
	return UnifiedDiff(from, "b/"+shown, before, after)
}

// readIn reads rel inside root; a missing file reads as empty. Only a
// regular file is read, opened without blocking (a FIFO named by the model
// must not hang the preview a person waits for), and at most 8 MiB of it.
func readIn(root, rel string) (string, bool, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", false, err
	}
	defer r.Close()
	f, _, err := action.OpenRegular(r, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 8<<20))
	return string(b), true, err
}

// UnifiedDiff returns the differences between two texts as a unified diff
// with three lines of context, headed by the names from and to. Equal
// texts give "".
func UnifiedDiff(from, to, a, b string) string {
	if a == b {
		return ""
	}
	al, bl := splitLines(a), splitLines(b)
	if len(al) > maxPreviewLines || len(bl) > maxPreviewLines {
		return fmt.Sprintf("--- %s\n+++ %s\n(%d lines → %d lines; too long to show)\n", from, to, len(al), len(bl))
	}
	ops := diffLines(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	const ctx = 3
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
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
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
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
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
		case i < n && j < m && a[i] == b[j]:
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
