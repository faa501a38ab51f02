package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

type listArgs struct {
	Pattern string `json:"pattern"`
}

func listTool(ws *workspace, lim Limits) *tool {
	return &tool{
		name: ListFiles,
		description: "List the files in the workspace whose paths match a glob pattern, one path a line, sorted. " +
			"\"*\", \"?\" and \"[...]\" match within one path segment; a \"**\" segment matches any number of " +
			"segments, including none (\"**/*.go\" is every Go file, \"cmd/**\" everything under cmd). " +
			"Files and symlinks are listed, directories are not; .git (anywhere) and the root's .harness are skipped.",
		schema: objectSchema(map[string]prop{
			"pattern": {"type": "string", "description": "A glob relative to the workspace root; default \"**\" (every file)."},
		}),
		capability: action.Read,
		run: func(ctx context.Context, raw json.RawMessage) (facts.Report, error) {
			var a listArgs
			if err := decodeArgs(raw, &a); err != nil {
				return failed(ListFiles, err), nil
			}
			if a.Pattern == "" {
				a.Pattern = "**"
			}
			segs, err := ws.glob(a.Pattern)
			if err != nil {
				return failed(ListFiles, err), nil
			}
			root, err := ws.open()
			if err != nil {
				return failed(ListFiles, err), fmt.Errorf("%s: %w", ListFiles, err)
			}
			defer root.Close()
			var found []string
			total := 0
			base := literalPrefix(segs)
			err = fs.WalkDir(root.FS(), base, func(p string, d fs.DirEntry, err error) error {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				if err != nil {
					if p == base && errors.Is(err, fs.ErrNotExist) {
						return fs.SkipAll // nothing there: no matches
					}
					return pathError(p, err)
				}
				if p == "." {
					return nil
				}
				name := strings.Split(p, "/")
				if unobserved(p) {
					if d.IsDir() {
						return fs.SkipDir
					}
					return nil
				}
				if d.IsDir() {
					if !couldMatchUnder(segs, name) {
						return fs.SkipDir
					}
					return nil
				}
				if !matchSegments(segs, name) {
					return nil
				}
				total++
				if len(found) < lim.ListEntries {
					found = append(found, p)
				}
				return nil
			})
			if err != nil {
				if ctx.Err() != nil {
					return failed(ListFiles, err), fmt.Errorf("%s: %w", ListFiles, err)
				}
				return failed(ListFiles, err), nil
			}
			summary := fmt.Sprintf("%d files match %q", total, a.Pattern)
			switch {
			case total == 1:
				summary = fmt.Sprintf("1 file matches %q", a.Pattern)
			case total > len(found):
				summary += fmt.Sprintf("; the first %d are listed, %d were cut: narrow the pattern", len(found), total-len(found))
			}
			out := strings.Join(found, "\n")
			if out != "" {
				out += "\n"
			}
			return facts.Report{Status: facts.StatusSucceeded, Transcript: summary, Stdout: out}, nil
		},
	}
}

// glob checks a pattern and splits it into segments. It refuses what rel
// refuses — ".." and absolute patterns outside the root — and malformed
// segments ("[a-").
func (w *workspace) glob(pattern string) ([]string, error) {
	p := filepath.ToSlash(pattern)
	if filepath.IsAbs(filepath.FromSlash(p)) {
		r, ok := w.within(filepath.FromSlash(p))
		if !ok {
			return nil, fmt.Errorf("%w: pattern %q is absolute and not under the workspace root %s", ErrOutsideWorkspace, pattern, w.dir)
		}
		p = filepath.ToSlash(r)
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return nil, fmt.Errorf("%w: pattern %q climbs out of the workspace with \"..\"", ErrOutsideWorkspace, pattern)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("%w: pattern %q: segment %q: %w", ErrInvalidArgs, pattern, s, err)
		}
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue // "**/**" is "**"
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		segs = []string{"**"}
	}
	return segs, nil
}

// literalPrefix is the directory the walk starts from: the pattern's
// leading segments without a glob character ("cmd/harness" for
// "cmd/harness/*.go"), or ".". The last segment is never part of it, so
// a literal file name is matched, not walked into.
func literalPrefix(segs []string) string {
	var lit []string
	for _, s := range segs[:len(segs)-1] {
		if strings.ContainsAny(s, `*?[\`) {
			break
		}
		lit = append(lit, s)
	}
	if len(lit) == 0 {
		return "."
	}
	return strings.Join(lit, "/")
}

// matchSegments reports whether a path's segments match a pattern's: each
// pattern segment matches one path segment (path.Match), except "**",
// which matches any number of them.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := len(name); i >= 0; i-- {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// couldMatchUnder reports whether some path below the directory dir could
// match the pattern, so the walk can skip a directory that cannot.
func couldMatchUnder(pat, dir []string) bool {
	for _, d := range dir {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], d); !ok {
			return false
		}
		pat = pat[1:]
	}
	return len(pat) > 0
}
