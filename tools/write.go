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
	"github.com/seed-7cc7a084/harness/present"
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

// tooLarge is the error of a content of size bytes, past the limit of
// what tool writes.
func tooLarge(tool, what string, size, limit int) error {
	bound := present.Plural(limit, "byte", "bytes")
	if limit >= 1<<20 && limit%(1<<20) == 0 {
		bound += fmt.Sprintf(" (%d MiB)", limit>>20)
	}
	return fmt.Errorf("%w: %s is %s, more than the %s %s writes; nothing was written, and nothing is cut to fit",
		ErrTooLarge, what, present.Plural(size, "byte", "bytes"), bound, tool)
}

// fileTool is the body write_file and edit_file share: a call names one
// file of the workspace and the whole content it is to hold, which the
// tool makes from the arguments and, for an edit, the file as it is. Both
// refuse what writable refuses, declare FileEquals on the content they
// mean to leave, and replace the file atomically where one walk found it
// (writeFile).
type fileTool struct {
	name string
	// parse decodes and checks the arguments, without the file: the path
	// they name, as written, and how to make the new content.
	parse func(raw json.RawMessage) (path string, content contentOf, err error)
	// checkMode is how the declared check walks to the file (it makes
	// nothing); runMode how the run does.
	checkMode, runMode walkMode
}

// contentOf makes the content a file is to hold from where a walk found
// it (sp), and says what the write did, given whether it created the file
// and the file's previous size.
type contentOf func(sp *spot) (data []byte, said func(created bool, prev int64) string, err error)

// target parses a call's arguments and resolves the path they name.
func (f fileTool) target(ws *workspace, raw json.RawMessage) (string, contentOf, error) {
	path, content, err := f.parse(raw)
	if err != nil {
		return "", nil, err
	}
	rel, err := ws.rel(path)
	if err != nil {
		return "", nil, err
	}
	return rel, content, ws.refuseProtected(rel)
}

// precheck refuses a call that would be refused as the workspace is now.
func (f fileTool) precheck(ws *workspace, raw json.RawMessage) error {
	rel, _, err := f.target(ws, raw)
	if err != nil {
		return err
	}
	return ws.writableNow(rel)
}

// check declares FileEquals on the content the call would leave, made
// from the file as it is when the request is made.
func (f fileTool) check(ws *workspace, raw json.RawMessage) (*facts.CheckSpec, error) {
	rel, content, err := f.target(ws, raw)
	if err != nil {
		return nil, err
	}
	root, err := ws.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	sp, err := ws.writable(root, rel, f.checkMode)
	if err != nil {
		return nil, err
	}
	defer sp.close()
	data, _, err := content(sp)
	if err != nil {
		return nil, err
	}
	spec := action.FileEquals(rel, data)
	return &spec, nil
}

// run carries out a call: everything about it is in the report; an error
// only when the workspace cannot be opened.
func (f fileTool) run(ws *workspace, raw json.RawMessage) (facts.Report, error) {
	rel, content, err := f.target(ws, raw)
	if err != nil {
		return failed(f.name, err), nil
	}
	root, err := ws.open()
	if err != nil {
		return failed(f.name, err), fmt.Errorf("%s: %w", f.name, err)
	}
	defer root.Close()
	sp, err := ws.writable(root, rel, f.runMode)
	if err != nil {
		return failed(f.name, err), nil
	}
	defer sp.close()
	data, said, err := content(sp)
	if err != nil {
		return failed(f.name, err), nil
	}
	created, prev, err := writeFile(sp, data)
	if err != nil {
		return failed(f.name, err), nil
	}
	return facts.Report{Status: facts.StatusSucceeded, Transcript: said(created, prev), ClaimedState: claim(data)}, nil
}

// tool is f with its description and schema, asking for confirmation.
func (f fileTool) tool(ws *workspace, description string, schema json.RawMessage) *tool {
	return &tool{
		name:        f.name,
		description: description,
		schema:      schema,
		capability:  action.Write,
		confirm:     true,
		precheck:    func(raw json.RawMessage) error { return f.precheck(ws, raw) },
		check:       func(raw json.RawMessage) (*facts.CheckSpec, error) { return f.check(ws, raw) },
		run: func(_ context.Context, raw json.RawMessage, _ *facts.Sandbox) (facts.Report, error) {
			return f.run(ws, raw)
		},
	}
}

// writeTool is write_file. Its declared check is FileEquals on the
// target: after the write, the file holds exactly content.
func writeTool(ws *workspace, lim Limits) *tool {
	f := fileTool{name: WriteFile, checkMode: resolveOnly, runMode: forWrite}
	f.parse = func(raw json.RawMessage) (string, contentOf, error) {
		var a writeArgs
		if err := decodeArgs(raw, &a, "path", "content"); err != nil {
			return "", nil, err
		}
		if len(a.Content) > lim.FileBytes {
			return "", nil, tooLarge(WriteFile, "the content", len(a.Content), lim.FileBytes)
		}
		return a.Path, func(sp *spot) ([]byte, func(bool, int64) string, error) {
			data := []byte(a.Content)
			return data, func(created bool, prev int64) string {
				if created {
					return fmt.Sprintf("created %s with %s", sp.rel, present.Plural(len(data), "byte", "bytes"))
				}
				return fmt.Sprintf("replaced %s (%s) with %s", sp.rel, present.Plural(int(prev), "byte", "bytes"), present.Plural(len(data), "byte", "bytes"))
			}, nil
		}, nil
	}
	return f.tool(ws, "Write a file in the workspace: create it (and its missing directories) or replace "+
		"its whole content. The file is replaced atomically and keeps its permissions. To change part "+
		"of a file, use edit_file.",
		objectSchema(map[string]prop{
			"path":    {"type": "string", "description": "The file, relative to the workspace root."},
			"content": {"type": "string", "description": "The file's whole new content."},
		}, "path", "content"))
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

// editTool is edit_file. Its declared check is FileEquals on the whole
// file the edit is expected to produce, computed from the file as it is
// when the request is made. FileContains(path, new) would pass when the
// edit landed in the wrong place, when old was left in as well, or when
// new was already in the file and nothing happened; FileEquals fails in
// each of those. It also fails when something else changed the file
// between the request and the run — the file is then not what the person
// confirmed, and the check says so.
func editTool(ws *workspace, lim Limits) *tool {
	f := fileTool{name: EditFile, checkMode: forEdit, runMode: forEdit}
	f.parse = func(raw json.RawMessage) (string, contentOf, error) {
		var a editArgs
		if err := decodeArgs(raw, &a, "path", "old", "new"); err != nil {
			return "", nil, err
		}
		if a.Old == "" {
			return "", nil, fmt.Errorf("%w: field \"old\" is empty; to create a file, use write_file", ErrInvalidArgs)
		}
		return a.Path, func(sp *spot) ([]byte, func(bool, int64) string, error) {
			data, err := sp.readAll(int64(lim.FileBytes))
			if err != nil {
				return nil, nil, err
			}
			e, err := planEdit(sp.rel, data, a.Old, a.New)
			if err == nil && len(e.result) > lim.FileBytes {
				err = tooLarge(EditFile, "the file it would leave", len(e.result), lim.FileBytes)
			}
			if err != nil {
				return nil, nil, err
			}
			return e.result, func(bool, int64) string {
				return fmt.Sprintf("edited %s at line %d: replaced %s with %s (%d → %d bytes)",
					sp.rel, e.line, present.Plural(e.oldLines, "line", "lines"), present.Plural(e.newLines, "line", "lines"), e.prevLength, len(e.result))
			}, nil
		}, nil
	}
	return f.tool(ws, "Edit a file in the workspace by replacing one exact piece of text with another. "+
		"old must occur exactly once in the file, matched byte for byte (whitespace and line endings "+
		"included); if it occurs nowhere or more than once, nothing is changed and the error says how "+
		"often it occurs. Include enough surrounding lines to make old unique.",
		objectSchema(map[string]prop{
			"path": {"type": "string", "description": "The file, relative to the workspace root."},
			"old":  {"type": "string", "minLength": 1, "description": "The exact text to replace; it must occur exactly once."},
			"new":  {"type": "string", "description": "The text to put in its place (may be empty to delete)."},
		}, "path", "old", "new"))
}
