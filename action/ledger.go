package action

import (
	"encoding/json"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/seed-7cc7a084/harness/facts"
)

// Ledger is what the threads that share one workspace directory know of
// each other's actions: which ran when, the paths each request names, and
// what each observed. A Boundary with a Ledger (and its Thread) tells, in
// each observation, the paths other threads' recorded actions changed
// (facts.Observation.Others, named by thread and action) from those no
// recorded action names (Unrecorded). One Ledger serves every runtime of
// a process that works in the directory; its zero value is ready. It
// reads no clock: its order is the order actions begin and are observed.
//
// A path is another thread's when an action of that thread, running at
// the same time, names it in its request and this action's request does
// not; or when that action is a command (its request names no path)
// observed before this one, which saw the path change to the same content
// and gave it to nobody else; or, for a path no request names, when that
// action is a command still running (Running). Two commands running at
// once cannot be told apart by what they change: each may be named for
// the other's change. Threads that never run at the same
// time never appear in each other's records.
//
// Shared, when set, is a file through which the ledgers of several
// processes working in the directory (two workers, a run beside a
// worker) see each other's actions: each begin and end is a line
// appended to it under an exclusive lock, its order the ledger's, so an
// observation names another process's actions as it names this
// process's (see shared.go). It must be somewhere no sandboxed command
// can write (harness keeps it in the user's cache directory, outside
// every writable root), or a command could forge another thread's
// entries.
type Ledger struct {
	Shared string

	mu      sync.Mutex // guards tick and entries (and, for Shared, the file's use in this process)
	tick    uint64
	entries []*ledgerEntry
}

// ledgerEntry is one action in the ledger.
type ledgerEntry struct {
	// id names the entry in a Shared file (process and counter).
	id             string
	pid            int
	thread, action string
	names          []string // the paths its request names; nil for none
	// own are the files the process that began it writes itself (see
	// WithOwnFiles), which its observations leave out: the process that
	// finds it in doubt leaves them out too.
	own        []ownFile
	start, end uint64 // end is 0 while it runs
	// changed are the paths its observation saw change and did not give
	// to another thread (to their content after): its own, or nobody's.
	changed map[string]string
}

// ownFile is a file the harness itself writes ([WithOwnFiles]), by its
// identity, as a ledger entry carries it.
type ownFile struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// begin enters an action that is about to run, begun by a process that
// writes the files own.
func (l *Ledger) begin(thread string, req Request, own []ownFile) *ledgerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tick++
	e := &ledgerEntry{thread: thread, action: req.ActionID, names: Names(req.Payload), start: l.tick, own: own}
	if l.Shared != "" && l.beginShared(e) == nil {
		return e // the file keeps it
	}
	l.entries = append(l.entries, e)
	return e
}

// end records what e observed, returns the observation's changes
// attributed, and forgets the actions no running one overlaps.
func (l *Ledger) end(e *ledgerEntry, changed []facts.PathChange) (others []facts.OtherChange, unrecorded []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.id != "" {
		return l.endShared(e, changed)
	}
	l.tick++
	e.end = l.tick
	others, unrecorded = attribute(l.entries, e, changed)
	l.prune()
	return others, unrecorded
}

// attribute tells, of the paths e (ended) saw change, those other
// threads' actions in entries made from those nobody recorded, and
// keeps in e.changed what is its own or nobody's.
func attribute(entries []*ledgerEntry, e *ledgerEntry, changed []facts.PathChange) (others []facts.OtherChange, unrecorded []string) {
	e.changed = make(map[string]string, len(changed))
	for _, c := range changed {
		if slices.Contains(e.names, c.Path) {
			e.changed[c.Path] = c.After
			continue // its own
		}
		var by []*ledgerEntry
		for _, o := range entries {
			if o == e || o.thread == e.thread || !overlaps(o, e) {
				continue
			}
			after, saw := o.changed[c.Path]
			switch {
			case slices.Contains(o.names, c.Path):
				by = append(by, o)
			case o.end != 0 && o.names == nil && saw && after == c.After:
				by = append(by, o) // a command observed making it
			case o.end == 0 && o.names == nil && !namedByAny(entries, e, c.Path):
				by = append(by, o) // a command running while it changed
			}
		}
		for _, o := range by {
			others = addOther(others, o, c.Path)
		}
		switch {
		case len(by) > 0:
		case e.names != nil:
			unrecorded = append(unrecorded, c.Path)
		default:
			e.changed[c.Path] = c.After // a command's own, or nobody's
		}
	}
	return others, unrecorded
}

// overlaps reports whether o ran while e did (e has ended).
func overlaps(o, e *ledgerEntry) bool {
	return o.start < e.end && (o.end == 0 || o.end > e.start)
}

// namedByAny reports whether an action overlapping e names p.
func namedByAny(entries []*ledgerEntry, e *ledgerEntry, p string) bool {
	for _, o := range entries {
		if o != e && overlaps(o, e) && slices.Contains(o.names, p) {
			return true
		}
	}
	return false
}

func addOther(others []facts.OtherChange, o *ledgerEntry, p string) []facts.OtherChange {
	for i := range others {
		if others[i].Thread == o.thread && others[i].Action == o.action {
			others[i].Paths = append(others[i].Paths, p)
			return others
		}
	}
	return append(others, facts.OtherChange{Thread: o.thread, Action: o.action, Paths: []string{p}, Running: o.end == 0})
}

// prune forgets the ended actions that began before every running one
// and ended before any running one began: no later observation overlaps
// them.
func (l *Ledger) prune() {
	oldest := l.tick + 1
	for _, o := range l.entries {
		if o.end == 0 {
			oldest = min(oldest, o.start)
		}
	}
	l.entries = slices.DeleteFunc(l.entries, func(o *ledgerEntry) bool { return o.end != 0 && o.end < oldest })
}

// Names are the workspace paths a request's payload names: its "path"
// field (the file tools'), cleaned and relative as an observation lists
// paths; nil when it names none (a command). What the payload says is
// untrusted: a name only sorts an observation's paths, it grants nothing.
func Names(payload json.RawMessage) []string {
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(payload, &a) != nil || a.Path == "" {
		return nil
	}
	p := path.Clean(strings.TrimPrefix(a.Path, "./"))
	if p == "." || strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../") {
		return nil
	}
	return []string{p}
}
