package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// claim is the state a writer believes it left: the digest of the bytes it
// wrote, in the form "sha256:<hex>". It is only a claim; the runtime's
// observation and the declared check decide.
func claim(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// tooLarge is the error of a content of size bytes, past the limit of
// what tool writes.
func tooLarge(tool, what string, size, limit int) error {
	bound := plural(limit, "byte", "bytes")
	if limit >= 1<<20 && limit%(1<<20) == 0 {
		bound += fmt.Sprintf(" (%d MiB)", limit>>20)
	}
	return fmt.Errorf("%w: %s is %s, more than the %s %s writes; nothing was written, and nothing is cut to fit",
		ErrTooLarge, what, plural(size, "byte", "bytes"), bound, tool)
}

func writeTool(ws *workspace, lim Limits) *tool {
	parse := func(raw json.RawMessage) (writeArgs, string, error) {
		var a writeArgs
		if err := decodeArgs(raw, &a, "path", "content"); err != nil {
			return a, "", err
		}
		if len(a.Content) > lim.FileBytes {
			return a, "", tooLarge(WriteFile, "the content", len(a.Content), lim.FileBytes)
		}
		rel, err := ws.rel(a.Path)
		if err != nil {
			return a, "", err
		}
		return a, rel, ws.refuseProtected(rel)
	}
	return &tool{
		name: WriteFile,
		description: "Write a file in the workspace: create it (and its missing directories) or replace " +
			"its whole content. The file is replaced atomically and keeps its permissions. To change part " +
			"of a file, use edit_file.",
		schema: objectSchema(map[string]prop{
			"path":    {"type": "string", "description": "The file, relative to the workspace root."},
			"content": {"type": "string", "description": "The file's whole new content."},
		}, "path", "content"),
		capability: action.Write,
		confirm:    true,
		precheck: func(raw json.RawMessage) error {
			_, rel, err := parse(raw)
			if err != nil {
				return err
			}
			return ws.writableNow(rel)
		},
		// The declared check is FileEquals on the target: after the write,
		// the file holds exactly content.
		check: func(raw json.RawMessage) (*facts.CheckSpec, error) {
			a, rel, err := parse(raw)
			if err != nil {
				return nil, err
			}
			if err := ws.writableNow(rel); err != nil {
				return nil, err
			}
			spec := action.FileEquals(rel, []byte(a.Content))
			return &spec, nil
		},
		run: func(ctx context.Context, raw json.RawMessage, _ *facts.Sandbox) (facts.Report, error) {
			a, rel, err := parse(raw)
			if err != nil {
				return failed(WriteFile, err), nil
			}
			root, err := ws.open()
			if err != nil {
				return failed(WriteFile, err), fmt.Errorf("%s: %w", WriteFile, err)
			}
			defer root.Close()
			sp, err := ws.writable(root, rel, forWrite)
			if err != nil {
				return failed(WriteFile, err), nil
			}
			defer sp.close()
			data := []byte(a.Content)
			created, prev, err := writeFile(sp, data)
			if err != nil {
				return failed(WriteFile, err), nil
			}
			what := fmt.Sprintf("created %s with %s", rel, plural(len(data), "byte", "bytes"))
			if !created {
				what = fmt.Sprintf("replaced %s (%s) with %s", rel, plural(int(prev), "byte", "bytes"), plural(len(data), "byte", "bytes"))
			}
			return facts.Report{Status: facts.StatusSucceeded, Transcript: what, ClaimedState: claim(data)}, nil
		},
	}
}

type editArgs struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// edit is one planned replacement: the file's bytes after it, and where.
type edit struct {
	result     []byte
	line       int // the 1-based line where old began
	oldLines   int
	newLines   int
	prevLength int
}

// planEdit replaces the one occurrence of oldText in data. Occurrences are
// counted overlapping ("aa" occurs twice in "aaa"), so "unique" means one
// place in the file oldText could refer to.
func planEdit(rel string, data []byte, oldText, newText string) (edit, error) {
	if oldText == newText {
		return edit{}, fmt.Errorf("%w: old and new are the same text; nothing would change", ErrInvalidArgs)
	}
	var at []int
	for i := 0; i <= len(data)-len(oldText); {
		j := bytes.Index(data[i:], []byte(oldText))
		if j < 0 {
			break
		}
		at = append(at, i+j)
		i += j + 1
	}
	lineOf := func(off int) int { return bytes.Count(data[:off], []byte("\n")) + 1 }
	switch len(at) {
	case 0:
		hint := ""
		if bytes.Contains(data, []byte("\r\n")) && !strings.Contains(oldText, "\r") && strings.Contains(oldText, "\n") {
			hint = " (the file has CRLF line endings; old has LF)"
		}
		return edit{}, fmt.Errorf("%w in %s: it occurs 0 times%s; read the file again and copy the text exactly", ErrNoMatch, rel, hint)
	case 1:
	default:
		lines := make([]string, 0, min(len(at), 10))
		for _, off := range at[:min(len(at), 10)] {
			lines = append(lines, fmt.Sprint(lineOf(off)))
		}
		more := ""
		if len(at) > 10 {
			more = ", …"
		}
		return edit{}, fmt.Errorf("%w in %s: it occurs %d times (at lines %s%s); include more of the surrounding text so it occurs once",
			ErrAmbiguousMatch, rel, len(at), strings.Join(lines, ", "), more)
	}
	i := at[0]
	out := make([]byte, 0, len(data)-len(oldText)+len(newText))
	out = append(append(append(out, data[:i]...), newText...), data[i+len(oldText):]...)
	return edit{
		result: out, line: lineOf(i), prevLength: len(data),
		oldLines: strings.Count(oldText, "\n") + 1, newLines: strings.Count(newText, "\n") + 1,
	}, nil
}

func editTool(ws *workspace, lim Limits) *tool {
	parse := func(raw json.RawMessage) (editArgs, string, error) {
		var a editArgs
		if err := decodeArgs(raw, &a, "path", "old", "new"); err != nil {
			return a, "", err
		}
		if a.Old == "" {
			return a, "", fmt.Errorf("%w: field \"old\" is empty; to create a file, use write_file", ErrInvalidArgs)
		}
		rel, err := ws.rel(a.Path)
		if err != nil {
			return a, "", err
		}
		return a, rel, ws.refuseProtected(rel)
	}
	// plan reads the file as it is now and plans the edit.
	plan := func(raw json.RawMessage) (edit, string, error) {
		a, rel, err := parse(raw)
		if err != nil {
			return edit{}, rel, err
		}
		root, err := ws.open()
		if err != nil {
			return edit{}, rel, err
		}
		defer root.Close()
		sp, err := ws.writable(root, rel, forEdit)
		if err != nil {
			return edit{}, rel, err
		}
		defer sp.close()
		data, err := sp.readAll(int64(lim.FileBytes))
		if err != nil {
			return edit{}, rel, err
		}
		e, err := planEdit(rel, data, a.Old, a.New)
		if err == nil && len(e.result) > lim.FileBytes {
			err = tooLarge(EditFile, "the file it would leave", len(e.result), lim.FileBytes)
		}
		return e, rel, err
	}
	return &tool{
		name: EditFile,
		description: "Edit a file in the workspace by replacing one exact piece of text with another. " +
			"old must occur exactly once in the file, matched byte for byte (whitespace and line endings " +
			"included); if it occurs nowhere or more than once, nothing is changed and the error says how " +
			"often it occurs. Include enough surrounding lines to make old unique.",
		schema: objectSchema(map[string]prop{
			"path": {"type": "string", "description": "The file, relative to the workspace root."},
			"old":  {"type": "string", "minLength": 1, "description": "The exact text to replace; it must occur exactly once."},
			"new":  {"type": "string", "description": "The text to put in its place (may be empty to delete)."},
		}, "path", "old", "new"),
		capability: action.Write,
		confirm:    true,
		precheck: func(raw json.RawMessage) error {
			_, rel, err := parse(raw)
			if err != nil {
				return err
			}
			return ws.writableNow(rel)
		},
		// The declared check is FileEquals on the whole file the edit is
		// expected to produce, computed from the file as it is when the
		// request is made. FileContains(path, new) would pass when the
		// edit landed in the wrong place, when old was left in as well, or
		// when new was already in the file and nothing happened; FileEquals
		// fails in each of those. It also fails when something else
		// changed the file between the request and the run — the file is
		// then not what the person confirmed, and the check says so.
		check: func(raw json.RawMessage) (*facts.CheckSpec, error) {
			e, rel, err := plan(raw)
			if err != nil {
				return nil, err
			}
			spec := action.FileEquals(rel, e.result)
			return &spec, nil
		},
		run: func(ctx context.Context, raw json.RawMessage, _ *facts.Sandbox) (facts.Report, error) {
			a, rel, err := parse(raw)
			if err != nil {
				return failed(EditFile, err), nil
			}
			root, err := ws.open()
			if err != nil {
				return failed(EditFile, err), fmt.Errorf("%s: %w", EditFile, err)
			}
			defer root.Close()
			sp, err := ws.writable(root, rel, forEdit)
			if err != nil {
				return failed(EditFile, err), nil
			}
			defer sp.close()
			data, err := sp.readAll(int64(lim.FileBytes))
			if err != nil {
				return failed(EditFile, err), nil
			}
			e, err := planEdit(rel, data, a.Old, a.New)
			if err == nil && len(e.result) > lim.FileBytes {
				err = tooLarge(EditFile, "the file it would leave", len(e.result), lim.FileBytes)
			}
			if err != nil {
				return failed(EditFile, err), nil
			}
			if _, _, err := writeFile(sp, e.result); err != nil {
				return failed(EditFile, err), nil
			}
			return facts.Report{
				Status: facts.StatusSucceeded,
				Transcript: fmt.Sprintf("edited %s at line %d: replaced %s with %s (%d → %d bytes)",
					rel, e.line, plural(e.oldLines, "line", "lines"), plural(e.newLines, "line", "lines"), e.prevLength, len(e.result)),
				ClaimedState: claim(e.result),
			}, nil
		},
	}
}
