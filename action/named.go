package action

import "slices"

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
func (w *Workspace) Named(names []string) (paths []string, reading uint64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tree == nil || w.reading == 0 {
		return nil, 0, false
	}
	var find func(r *dirRec, prefix string) bool
	find = func(r *dirRec, prefix string) bool {
		for i := range r.ents {
			e := &r.ents[i]
			if e.skip || e.kind == kindGone {
				continue
			}
			if slices.Contains(names, e.name) {
				paths = append(paths, prefix+e.name)
				continue
			}
			if e.kind != kindDir {
				continue
			}
			if e.dir == nil {
				return false // not listed: this reading cannot say
			}
			if !find(e.dir, prefix+e.name+"/") {
				return false
			}
		}
		return true
	}
	if !find(w.tree, "") {
		return nil, 0, false
	}
	slices.Sort(paths)
	return paths, w.reading, true
}

// Readings is how many readings of the workspace were started so far,
// whether they succeeded or not. A reading numbered above it was started
// after the call.
func (w *Workspace) Readings() uint64 { return w.readings.Load() }
