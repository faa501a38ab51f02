package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

type readArgs struct {
	Path     string `json:"path"`
	Offset   *int   `json:"offset"`
	Limit    *int   `json:"limit"`
	MaxBytes *int   `json:"max_bytes"`
}

// binarySniff is how much of a file read_file looks at for a NUL byte, the
// sign of a file that is not text (git uses the same rule).
const binarySniff = 8000

// readCall is a read_file call's arguments, checked.
type readCall struct {
	rel                    string
	first, limit, maxBytes int
}

func readTool(ws *workspace, lim Limits) *tool {
	parse := func(raw json.RawMessage) (readCall, error) {
		var a readArgs
		if err := decodeArgs(raw, &a, "path"); err != nil {
			return readCall{}, err
		}
		c := readCall{first: 1, limit: -1, maxBytes: lim.ReadBytes}
		for _, n := range []struct {
			name string
			v    *int
			to   *int
		}{{"offset", a.Offset, &c.first}, {"limit", a.Limit, &c.limit}, {"max_bytes", a.MaxBytes, &c.maxBytes}} {
			if n.v == nil {
				continue
			}
			if *n.v < 1 {
				return readCall{}, fmt.Errorf("%w: field %q is %d; want at least 1", ErrInvalidArgs, n.name, *n.v)
			}
			*n.to = *n.v
		}
		if c.maxBytes > lim.ReadBytes {
			return readCall{}, fmt.Errorf("%w: field \"max_bytes\" is %d; the most is %d", ErrInvalidArgs, c.maxBytes, lim.ReadBytes)
		}
		rel, err := ws.rel(a.Path)
		if err != nil {
			return readCall{}, err
		}
		c.rel = rel
		return c, nil
	}
	return &tool{
		name: ReadFile,
		description: "Read a text file in the workspace. Returns its lines as they are (no line numbers); " +
			"the summary line says which lines were shown and how many the file has. Use offset and limit " +
			"to page through a long file.",
		schema: objectSchema(map[string]prop{
			"path":      {"type": "string", "description": "The file, relative to the workspace root."},
			"offset":    {"type": "integer", "minimum": 1, "description": "The first line to return, 1-based (default 1)."},
			"limit":     {"type": "integer", "minimum": 1, "description": "The most lines to return (default: to the end, within max_bytes)."},
			"max_bytes": {"type": "integer", "minimum": 1, "maximum": lim.ReadBytes, "description": fmt.Sprintf("The most bytes to return (default and maximum %d); output ends at the last whole line that fits.", lim.ReadBytes)},
		}, "path"),
		capability: action.Read,
		precheck: func(raw json.RawMessage) error {
			r, err := parse(raw)
			if err != nil {
				return err
			}
			return ws.readableNow(r.rel)
		},
		run: func(ctx context.Context, raw json.RawMessage, _ *facts.Sandbox) (facts.Report, error) {
			r, err := parse(raw)
			if err != nil {
				return failed(ReadFile, err), nil
			}
			rel, first, limit, maxBytes := r.rel, r.first, r.limit, r.maxBytes
			root, err := ws.open()
			if err != nil {
				return failed(ReadFile, err), fmt.Errorf("%s: %w", ReadFile, err)
			}
			defer root.Close()
			// The file is opened in the directory the check walked to,
			// once: a link swapped in since cannot lead it elsewhere.
			sp, err := ws.readable(root, rel)
			if err != nil {
				return failed(ReadFile, err), nil
			}
			defer sp.close()
			var f *os.File
			var info fs.FileInfo
			switch {
			case sp.dir == nil:
				// A missing entry, or one that is not a directory, on the way.
				f, info, err = action.OpenRegular(root, filepath.FromSlash(rel))
				if err == nil {
					f.Close()
					err = fmt.Errorf("%w (it changed while it was read)", fs.ErrNotExist)
				}
			case sp.base == "":
				f, info, err = action.OpenRegular(sp.dir, ".")
			default:
				f, info, err = action.OpenRegular(sp.dir, sp.base)
				// The entry the check found, not a link swapped in since
				// (os.Root follows a link that stays in the directory):
				// the same file, or the read fails.
				if err == nil && (sp.info == nil || !os.SameFile(info, sp.info)) {
					f.Close()
					f, err = nil, fmt.Errorf("%w (it changed while it was read)", fs.ErrNotExist)
				}
			}
			switch {
			case errors.Is(err, action.ErrNotRegular) && info.IsDir():
				return failed(ReadFile, fmt.Errorf("path %q is a directory; list_files lists it", rel)), nil
			case errors.Is(err, action.ErrNotRegular):
				return failed(ReadFile, notRegularError{rel, info.Mode()}), nil
			case err != nil:
				return failed(ReadFile, pathError(rel, err)), nil
			}
			defer f.Close()
			w := window{first: first, limit: limit, cap: maxBytes, most: int64(lim.FileBytes)}
			if err := w.scan(ctx, f); err != nil {
				if ctx.Err() != nil {
					return failed(ReadFile, err), fmt.Errorf("%s: %w", ReadFile, err)
				}
				return failed(ReadFile, pathError(rel, err)), nil
			}
			if w.cut {
				w.fileSize = max(info.Size(), w.size+1)
			}
			if w.binary {
				return failed(ReadFile, fmt.Errorf("path %q looks binary (a NUL byte in its first %d bytes; %d bytes in all); read_file shows text", rel, binarySniff, info.Size())), nil
			}
			return w.report(rel)
		},
	}
}

// window is the lines of a file read_file shows: from line first, at most
// limit lines (-1: no limit), at most cap bytes. It reads the file once,
// in chunks, to count its lines, keeping no more than the window — the
// whole file, or its first most bytes when it is larger (cut).
type window struct {
	first, limit, cap int
	most              int64
	cut               bool  // the file is larger than most: its lines were counted in the first most bytes
	fileSize          int64 // the file's size, when cut

	buf    []byte // the window's bytes, a little past cap at most
	starts []int  // where each window line begins in buf
	full   bool   // buf passed cap: nothing more is kept
	lines  int    // the file's lines
	size   int64  // the file's bytes
	binary bool
}

func (w *window) scan(ctx context.Context, r io.Reader) error {
	chunk := make([]byte, 64<<10)
	line, atStart := 1, true
	var last byte
	lr := &io.LimitedReader{R: r, N: w.most}
	for {
		n, err := lr.Read(chunk)
		if n > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			data := chunk[:n]
			if w.size < binarySniff && bytes.IndexByte(data[:min(n, binarySniff-int(w.size))], 0) >= 0 {
				w.binary = true
				return nil
			}
			w.size += int64(n)
			last = data[n-1]
			for len(data) > 0 {
				seg := data
				nl := bytes.IndexByte(data, '\n')
				if nl >= 0 {
					seg = data[:nl+1]
				}
				inWindow := line >= w.first && (w.limit < 0 || line < w.first+w.limit)
				if inWindow && !w.full {
					if atStart {
						w.starts = append(w.starts, len(w.buf))
					}
					w.buf = append(w.buf, seg...)
					w.full = len(w.buf) > w.cap
				}
				data = data[len(seg):]
				atStart = nl >= 0
				if atStart {
					line++
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if lr.N == 0 {
		// most bytes were read: is there more?
		n, err := r.Read(chunk[:1])
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		w.cut = n > 0
	}
	w.lines = line - 1
	if w.size > 0 && last != '\n' {
		w.lines++
	}
	return nil
}

func (w *window) report(rel string) (facts.Report, error) {
	if w.size == 0 {
		return facts.Report{Status: facts.StatusSucceeded, Transcript: rel + ": empty file"}, nil
	}
	of := fmt.Sprint(w.lines)
	if w.cut {
		of = fmt.Sprintf("at least %d (only the first %d of its %d bytes were read)", w.lines, w.most, w.fileSize)
	}
	if w.first > w.lines {
		if w.cut {
			return failed(ReadFile, fmt.Errorf("%w: offset %d is past the %d lines in the first %d bytes of %q, which is all read_file reads of a file", ErrInvalidArgs, w.first, w.lines, w.most, rel)), nil
		}
		return failed(ReadFile, fmt.Errorf("%w: offset %d is past the end of %q, which has %d lines", ErrInvalidArgs, w.first, rel, w.lines)), nil
	}
	shown, text, partial := len(w.starts), w.buf, false
	if len(w.buf) > w.cap {
		// Keep the whole lines that fit; a first line longer than the cap
		// is cut at a rune boundary.
		shown = 0
		for i := 1; i < len(w.starts) && w.starts[i] <= w.cap; i++ {
			shown = i // line i-1 of the window ends at starts[i], within the cap
		}
		if shown > 0 {
			text = w.buf[:w.starts[shown]]
		} else {
			cut := w.cap
			for cut > 0 && !utf8.RuneStart(w.buf[cut]) {
				cut--
			}
			text, partial, shown = w.buf[:cut], true, 1
		}
	}
	lastShown := w.first + shown - 1
	summary := fmt.Sprintf("%s: lines %d-%d of %s", rel, w.first, lastShown, of)
	switch {
	case partial:
		summary += fmt.Sprintf("; line %d is longer than %d bytes and was cut there", w.first, w.cap)
	case len(w.buf) > w.cap:
		summary += fmt.Sprintf("; %d-byte cap reached, continue with offset=%d", w.cap, lastShown+1)
	case lastShown < w.lines:
		summary += fmt.Sprintf("; continue with offset=%d", lastShown+1)
	}
	return facts.Report{Status: facts.StatusSucceeded, Transcript: summary, Stdout: string(text)}, nil
}
