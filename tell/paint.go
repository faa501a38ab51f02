package tell

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
)

// Paint colours s for a terminal: color is one of "green", "yellow",
// "red", "dim" and "bold". A nil Paint leaves s as it is.
type Paint func(color, s string) string

// on paints s with p, or leaves it when p is nil.
func (p Paint) on(color, s string) string {
	if p == nil {
		return s
	}
	return p(color, s)
}

// FactLine is a fact as one line of the log: its seq, its kind and what it
// records (present.Describe).
func FactLine(f facts.Fact) string {
	return fmt.Sprintf("%4d  %-22s %s", f.Seq, f.Kind, present.Describe(f))
}

// TreeFactLine is a fact of the tree of the thread root as one line of
// the log: a fact of another thread of the tree (a child's) is indented
// and names its thread, dimmed.
func TreeFactLine(f facts.Fact, root string, paint Paint) string {
	if f.Thread == root {
		return FactLine(f)
	}
	return "  " + paint.on("dim", f.Thread) + " " + FactLine(f)
}

// OneLine is s on one line, its runs of white space one space, escaped.
func OneLine(s string) string { return present.EscapeLine(strings.Join(strings.Fields(s), " ")) }

// Dash is s, or "-" for an empty column.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// PrettyJSON indents JSON; anything else is returned as it is.
func PrettyJSON(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") == nil {
		return out.String()
	}
	return string(b)
}

// WriteBlock writes text line by line under indent, each line escaped.
func WriteBlock(w io.Writer, indent, text string) {
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fmt.Fprintf(w, "%s%s\n", indent, present.EscapeLine(line))
	}
}

// ShortDigest is a digest's first 12 characters, as a line shows it.
func ShortDigest(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// Indented is a writer that begins every line with Prefix.
type Indented struct {
	W      io.Writer
	Prefix string
	mid    bool // the last write ended inside a line
}

// Write writes p to W, Prefix before each line's first byte.
func (in *Indented) Write(p []byte) (int, error) {
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !in.mid {
			b.WriteString(in.Prefix)
		}
		b.Write(line)
		in.mid = line[len(line)-1] != '\n'
	}
	if _, err := in.W.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
