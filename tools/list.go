package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

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
			"Files and symlinks are listed, directories are not; .git and .harness (anywhere) are skipped, and so is what read_file may not read.",
		schema: objectSchema(map[string]prop{
			"pattern": {"type": "string", "description": "A glob relative to the workspace root; default \"**\" (every file)."},
		}),
		capability: action.Read,
		precheck: func(raw json.RawMessage) error {
			var a listArgs
			if err := decodeArgs(raw, &a); err != nil {
				return err
			}
			if a.Pattern == "" {
				return nil
			}
			_, err := ws.glob(a.Pattern)
			return err
		},
		run: func(ctx context.Context, raw json.RawMessage, _ *facts.Sandbox) (facts.Report, error) {
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
			err = ws.listTree(ctx, root, literalPrefix(segs), func(p string, dir bool) bool {
				name := strings.Split(p, "/")
				if dir {
					return couldMatchUnder(segs, name)
				}
				if matchSegments(segs, name) {
					total++
					if len(found) < lim.ListEntries {
						found = append(found, p)
					}
				}
				return false
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

// listTree visits, in lexical order, every entry under the directory base
// (slash-separated, "." for the root) inside r but those the observer
// leaves out (see unobserved) and those read_file would refuse (see
// readable: the store, at any depth and under any name a link gives it,
// and the user's settings): visit is told whether an entry is a directory
// (not a symlink to one), and for a directory returns whether to go into
// it. Symlinks are listed, never followed, but in base, which is resolved
// as read_file resolves a path: one that leads out of the workspace is
// refused, and one that leads into what read_file refuses is refused the
// same way; a base that does not exist or is not a directory has no
// entries. Each directory is opened from the one above it, held open
// (nothing on the way is resolved again), as a directory (it cannot be a
// named pipe that blocks the open), and one that was swapped for
// something else after it was listed is skipped: a link swapped in for a
// directory mid-walk cannot lead the listing into the store.
func (w *workspace) listTree(ctx context.Context, r *os.Root, base string, visit func(p string, dir bool) bool) error {
	for p := base; p != "."; p = path.Dir(p) {
		if unobserved(p) {
			return nil
		}
	}
	hide := w.hiddenIn(r)
	top, realBase := r, "."
	if base != "." {
		s, err := w.readableIn(r, base, hide)
		if err != nil {
			var k keptError
			if !errors.As(err, &k) && errors.Is(err, fs.ErrNotExist) {
				return nil // nothing there: no entries
			}
			return err
		}
		defer s.close()
		if s.dir == nil || s.base == "" || s.info == nil || !s.info.IsDir() || unobserved(s.real) {
			return nil // missing, not a directory, or left out
		}
		sub, err := openHeldDir(s.dir, s.base, s.info)
		if err != nil || sub == nil {
			return err
		}
		defer sub.Close()
		top, realBase = sub, s.real
	}
	var walk func(d *os.Root, dir, real string) error
	walk = func(d *os.Root, dir, real string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := d.Open(".")
		if err != nil {
			return pathError(dir, err)
		}
		entries, err := f.ReadDir(-1)
		_ = f.Close()
		if err != nil {
			return pathError(dir, err)
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, e := range entries {
			p, q := e.Name(), e.Name()
			if dir != "." {
				p = dir + "/" + p
			}
			if real != "." {
				q = real + "/" + q
			}
			if unobserved(p) || unobserved(q) || w.hiddenAt(q, hide) != "" {
				continue
			}
			if !e.IsDir() {
				visit(p, false)
				continue
			}
			if !visit(p, true) {
				continue
			}
			info, err := d.Lstat(e.Name())
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return pathError(p, err)
			}
			if !info.IsDir() {
				continue // swapped since it was listed
			}
			sub, err := openHeldDir(d, e.Name(), info)
			if err != nil {
				return pathError(p, err)
			}
			if sub == nil {
				continue // swapped since it was looked at
			}
			err = walk(sub, p, q)
			_ = sub.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk(top, base, realBase)
}

// openHeldDir opens the directory name in d, which was looked at as seen,
// as a root of its own; nil, with no error, when it is gone or is no
// longer the directory that was looked at (swapped for a link, a pipe or
// another directory).
func openHeldDir(d *os.Root, name string, seen fs.FileInfo) (*os.Root, error) {
	// name + "/." opens name as a directory (O_DIRECTORY).
	sub, err := d.OpenRoot(name + string(filepath.Separator) + ".")
	switch {
	case err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)):
		return nil, nil
	case err != nil:
		return nil, err
	}
	now, err := sub.Stat(".")
	if err != nil || !os.SameFile(seen, now) {
		_ = sub.Close()
		return nil, nil
	}
	return sub, nil
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
