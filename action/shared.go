package action

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/seed-7cc7a084/harness/facts"
)

// A Shared ledger file holds one JSON object a line: a "b" line when an
// action begins (its id — process and counter —, process, thread,
// action and the paths its request names) and an "e" line when it ends
// (its id and the paths it kept as its own or nobody's, to their content
// after). A line's place in the file is its tick: every line is appended
// under an exclusive lock (flock) of the file, so the order is the one
// all processes saw. The file is emptied when, as an action ends, no
// action in it is running any more (or only actions of processes that
// are gone: in doubt, their next holder records them); and started anew
// past maxShared bytes. What a line says sorts an observation's paths
// only: it grants nothing.

// maxShared bounds a shared ledger file: past it, it starts anew (the
// actions it held are then unnamed in later observations, not misnamed).
const maxShared = 16 << 20

// sharedLine is one line of a shared ledger file.
type sharedLine struct {
	Op      string            `json:"op"` // "b" or "e"
	ID      string            `json:"id"`
	PID     int               `json:"pid,omitempty"`
	Thread  string            `json:"thread,omitempty"`
	Action  string            `json:"action,omitempty"`
	Names   []string          `json:"names,omitempty"`
	Changed map[string]string `json:"changed,omitempty"`
	Own     []ownFile         `json:"own,omitempty"`
}

// sharedSeq numbers this process's entries in shared files.
var sharedSeq atomic.Uint64

// beginShared appends e's begin to the shared file, naming e. An error
// leaves e to this process's ledger alone.
func (l *Ledger) beginShared(e *ledgerEntry) error {
	e.pid = os.Getpid()
	e.id = fmt.Sprintf("%d.%d", e.pid, sharedSeq.Add(1))
	err := withShared(l.Shared, func(f *os.File) error {
		if st, err := f.Stat(); err == nil && st.Size() > maxShared {
			if err := f.Truncate(0); err != nil {
				return err
			}
		}
		return appendLine(f, sharedLine{Op: "b", ID: e.id, PID: e.pid, Thread: e.thread, Action: e.action, Names: e.names, Own: e.own})
	})
	if err != nil {
		e.id = ""
	}
	return err
}

// endShared appends e's end to the shared file and attributes e's
// changes among every action the file holds, of any process.
func (l *Ledger) endShared(e *ledgerEntry, changed []facts.PathChange) (others []facts.OtherChange, unrecorded []string) {
	err := withShared(l.Shared, func(f *os.File) error {
		entries, lines, err := readShared(f)
		if err != nil {
			return err
		}
		var me *ledgerEntry
		for _, o := range entries {
			if o.id == e.id {
				me = o
			}
		}
		if me == nil {
			// The file started anew since e began: what ran before is
			// not known; only what began since.
			me = e
			me.start = 0
			entries = append(entries, me)
		}
		me.end = lines + 1 // the line this end is appended as
		me.names = e.names
		others, unrecorded = attribute(entries, me, changed)
		if err := appendLine(f, sharedLine{Op: "e", ID: e.id, Changed: me.changed}); err != nil {
			return err
		}
		for _, o := range entries {
			if o.end == 0 && alive(o.pid) {
				return nil // still running: a later observation may overlap it
			}
		}
		return f.Truncate(0)
	})
	if err != nil {
		// The file could not be used: what this process knows.
		e.id = ""
		l.tick++
		e.end = l.tick
		return attribute(l.entries, e, changed)
	}
	return others, unrecorded
}

// withShared opens (making it) the shared file at path, locks it
// exclusively, and runs fn on it.
func withShared(path string, fn func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	unlock, err := lockFile(f)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(f)
}

// appendLine appends one line to f.
func appendLine(f *os.File, l sharedLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}

// readShared reads the entries of a shared file, and its number of
// lines: each begin's tick is its line's place (from 1), each end's too.
// A line that does not parse (a write cut short by a crash) is skipped.
func readShared(f *os.File) ([]*ledgerEntry, uint64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	var entries []*ledgerEntry
	byID := map[string]*ledgerEntry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxShared)
	var tick uint64
	for sc.Scan() {
		tick++
		var l sharedLine
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &l) != nil || l.ID == "" {
			continue
		}
		switch l.Op {
		case "b":
			if byID[l.ID] != nil {
				continue
			}
			e := &ledgerEntry{id: l.ID, pid: l.PID, thread: l.Thread, action: l.Action, names: l.Names, start: tick, own: l.Own}
			byID[l.ID] = e
			entries = append(entries, e)
		case "e":
			if e := byID[l.ID]; e != nil && e.end == 0 {
				e.end, e.changed = tick, l.Changed
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	return entries, tick, nil
}

// runningElsewhere returns the process id of another live process whose
// shared entry for thread's action is still open (begun, never ended), or
// 0. Only the shared file knows another process's actions; a ledger with
// none returns 0.
func (l *Ledger) runningElsewhere(thread, action string) int {
	if l.Shared == "" {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	pid := 0
	_ = withShared(l.Shared, func(f *os.File) error {
		entries, _, err := readShared(f)
		if err != nil {
			return err
		}
		for _, o := range entries {
			if o.thread == thread && o.action == action && o.end == 0 && o.pid != os.Getpid() && alive(o.pid) {
				pid = o.pid
			}
		}
		return nil
	})
	return pid
}

// inDoubt ends, in the shared file, the entry of an action found in
// doubt (thread's action, begun by a process that died and never ended)
// and attributes what its observation now saw change, as endShared
// does. Of the changes, those ownNow says are the dying process's own
// files (the entry's own: say, its output redirected into the workspace)
// are not the action's: its observation before left them out, as every
// observation of that process did. They are returned apart (own), and
// the rest (changed) attributed. An action the file no longer holds (or
// a ledger with no file) is told apart from nothing: changed as given,
// nil, nil, nil.
func (l *Ledger) inDoubt(thread, action string, changed []facts.PathChange, ownNow func([]ownFile, facts.PathChange) bool) (kept []facts.PathChange, own []string, others []facts.OtherChange, unrecorded []string) {
	kept = changed
	if l.Shared == "" {
		return kept, nil, nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = withShared(l.Shared, func(f *os.File) error {
		entries, lines, err := readShared(f)
		if err != nil {
			return err
		}
		var me *ledgerEntry
		for _, o := range entries {
			if o.thread == thread && o.action == action && o.end == 0 {
				me = o
			}
		}
		if me == nil {
			return nil
		}
		if len(me.own) > 0 {
			kept = nil
			for _, c := range changed {
				if ownNow(me.own, c) {
					own = append(own, c.Path)
					continue
				}
				kept = append(kept, c)
			}
		}
		me.end = lines + 1
		others, unrecorded = attribute(entries, me, kept)
		if err := appendLine(f, sharedLine{Op: "e", ID: me.id, Changed: me.changed}); err != nil {
			return err
		}
		for _, o := range entries {
			if o.end == 0 && alive(o.pid) {
				return nil
			}
		}
		return f.Truncate(0)
	})
	return kept, own, others, unrecorded
}
