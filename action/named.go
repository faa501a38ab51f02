package action

import (
	"slices"
	"strings"
)

// Named returns what the last reading found named one of names: the
// paths (slash-separated, relative to the root, in path order) of every
// entry in scope with such a name, whatever it is — a directory, a file,
// a link — and nothing below one. reading is that reading's number (see
// [Workspace.Readings]); ok is false when there is none, or when a
// directory in scope was not listed in it, and then paths is nil.
//
// It answers from memory, without touching the file system: the sandbox
// asks it where the nested stores (".harness") are, in place of a walk of
// the workspace at every command, when the reading is the one taken
// before the command (see package sandbox, Nested). What the scope leaves
// out (a ".git"'s working data, the store, [WithSkipPaths]) is not
// searched.
//
// Its cost follows what changed since the last call, not the size of the
// workspace: a directory record is shared by every reading in which the
// directory did not change, and the answer for it is kept with it (see
// dirRec.named), so only the records a reading made anew are searched.
func (w *Workspace) Named(names []string) (paths []string, reading uint64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tree == nil || w.reading == 0 {
		return nil, 0, false
	}
	found, ok := w.tree.namedUnder(namesKey(names), names, &w.namedScans)
	if !ok {
		return nil, 0, false
	}
	paths = slices.Clone(found)
	slices.Sort(paths)
	return paths, w.reading, true
}

// maxNamedKeys is how many sets of names a directory record keeps
// Named's answers for: each asker has its own (the sandbox asks for the
// nested stores and git directories at a command's start, the boundary
// for the git directories' HEAD and config at an action's), and askers
// that take turns must not make each other search the whole tree again.
const maxNamedKeys = 4

// namesKey is the key a directory record's answer is kept under: the
// names, joined by a byte no name holds.
func namesKey(names []string) string { return strings.Join(names, "\x00") }

// namedAnswer is what Named found under one directory record, for one
// set of names.
type namedAnswer struct {
	key   string   // the names asked (namesKey)
	paths []string // relative to the directory, in no order; shared: never modified
	ok    bool     // false: a directory under it in scope was not listed
}

// namedUnder is the entries named one of names under r (relative paths),
// and false when a directory under it in scope was not listed. A record
// never changes once it is part of a reading (a walk that finds a change
// makes a new one), so the answer is kept with it and given again for as
// long as a reading shares it; scans counts the records searched anew.
// The caller holds the Workspace's mu.
func (r *dirRec) namedUnder(key string, names []string, scans *uint64) ([]string, bool) {
	for _, a := range r.named {
		if a.key == key {
			return a.paths, a.ok
		}
	}
	*scans++
	var out []string
	ok := true
	for i := range r.ents {
		e := &r.ents[i]
		if e.skip || e.kind == kindGone {
			continue
		}
		if slices.Contains(names, e.name) {
			out = append(out, e.name)
			continue
		}
		if e.kind != kindDir {
			continue
		}
		if e.dir == nil {
			ok = false // not listed: this reading cannot say
			break
		}
		sub, subOK := e.dir.namedUnder(key, names, scans)
		if !subOK {
			ok = false
			break
		}
		for _, p := range sub {
			out = append(out, e.name+"/"+p)
		}
	}
	if !ok {
		out = nil
	}
	if len(r.named) == maxNamedKeys {
		r.named = slices.Delete(slices.Clone(r.named), 0, 1) // the oldest set asked goes
	}
	r.named = append(r.named, &namedAnswer{key: key, paths: out, ok: ok})
	return out, ok
}

// Readings is how many readings of the workspace were started so far,
// whether they succeeded or not. A reading numbered above it was started
// after the call.
func (w *Workspace) Readings() uint64 { return w.readings.Load() }
