package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
)

// Reader is what reads the whole workspace anyway — the runtime's
// observer (action.Workspace), before and after every action — and can
// say from its last reading where the entries of given names are, so
// that a command's start need not walk the workspace to find the nested
// stores (Spec.HiddenNames).
type Reader interface {
	// Named returns the paths (slash-separated, relative to the
	// workspace) of the entries named one of names in the last reading,
	// that reading's number, and false when there is no reading that can
	// say.
	Named(names []string) (paths []string, reading uint64, ok bool)
	// Readings is how many readings were started so far: a reading
	// numbered above it was started after the call.
	Readings() uint64
}

// Nested finds the nested stores of a workspace (the entries Spec.HiddenNames
// names) for its commands from a Reader's last reading instead of a walk
// of the workspace at every command's start: the walk is what made a
// command's start grow with the workspace. It is shared by every copy of
// the Spec that holds it (Spec.Clone keeps the pointer), and safe for
// concurrent use.
//
// The check is as strict as the walk's: a reading is used only when it
// was started after every earlier command of the Nested had ended, and no
// command of the Nested is running — so a .harness that a command made,
// whatever it holds (an empty directory, only a db/), is in the reading
// the next command uses (the runtime reads the workspace after each
// action and again before the next). Otherwise — no Reader, no reading
// since the last command, a command still running, a reading that cannot
// say — the helper walks the workspace, as without a Nested.
type Nested struct {
	mu      sync.Mutex // guards what follows
	reader  Reader
	running int    // commands started and not yet ended
	after   uint64 // a reading must be numbered above it to be used
}

// From makes r the reader the nested stores are taken from (nil: none,
// walk at every start).
func (n *Nested) From(r Reader) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reader = r
	n.after = 0
	if r != nil {
		n.after = r.Readings()
	}
}

// begin is called when a command starts: the nested entries of ws named
// one of names from a reading that may be used (relative paths), and
// true; or false, and the helper walks. Every begin is followed by one
// end, when the command has ended (or did not start).
func (n *Nested) begin(names []string) ([]string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	busy := n.running > 0
	n.running++
	if n.reader == nil || busy {
		return nil, false
	}
	paths, reading, ok := n.reader.Named(names)
	if !ok || reading <= n.after {
		return nil, false
	}
	return paths, true
}

// end is called when a command begun has ended: only a reading started
// after now may be used by the next.
func (n *Nested) end() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.running--
	if n.reader != nil {
		n.after = max(n.after, n.reader.Readings())
	}
}

// nestedTargets is what hides the entries rels (relative to ws, as a
// Reader gives them): each as it resolves when it is a symlink, unless
// that holds one of keep (the workspace, a writable root), as the walk
// decides; an entry gone meanwhile is left out, and so is one that lies
// within another.
func nestedTargets(ws string, rels []string, keep []string) []string {
	var out []string
	for _, rel := range rels {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || slices.ContainsFunc(keep, func(k string) bool { return within(k, real) }) {
				continue
			}
			p = real
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	// The outermost only: what lies beneath a covered entry is out of
	// sight already.
	var outer []string
	for _, p := range out {
		if !slices.ContainsFunc(out, func(q string) bool { return q != p && within(p, q) }) {
			outer = append(outer, p)
		}
	}
	return outer
}

// nestedGitPaths is what keeps the nested git directories rels (relative
// to ws, from the observer's reading; ws's own .git, links and what is no
// longer a directory left out; the first helper.MaxNestedGit) from a
// command, as the helper keeps those it finds: each is pinned (pins), its
// missing control entries made now (helper.MakeGitControl), and each of
// helper.GitControl there read-only (ro).
func nestedGitPaths(ws string, rels []string) (pins, ro []string) {
	for _, rel := range rels {
		if len(pins) == helper.MaxNestedGit {
			break
		}
		if rel == ".git" || !filepath.IsLocal(filepath.FromSlash(rel)) {
			continue
		}
		d := filepath.Join(ws, filepath.FromSlash(rel))
		if !helper.MakeGitControl(d) {
			continue
		}
		pins = append(pins, d)
		for _, c := range helper.GitControl {
			ro = append(ro, filepath.Join(d, c))
		}
	}
	return pins, ro
}
