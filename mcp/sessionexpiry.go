package mcp

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"
)

// A session kept for a question asked during a call (SaveSession) is
// forgotten when the call ends or its answer is delivered after a
// restart. A process that died with the question open, whose thread is
// never resumed, leaves its file: ExpireSessions forgets those past an
// age, and the oldest past a count.

// KeptSessionAge and KeptSessions bound the kept sessions a process
// starting (a serve, a run, a worker with a remote server) leaves: a
// question unanswered for a week is answered, if at all, with its call
// in doubt (the session file gone, as when the server forgot it).
const (
	KeptSessionAge = 7 * 24 * time.Hour
	KeptSessions   = 256
)

// keptSessionFile is the name of a kept session's file (sessionFile),
// compiled at first use, not at start-up.
var keptSessionFile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{32}\.session-[0-9a-f]{32}\.json$`)
})

// ExpireSessions forgets the kept sessions of every server whose file is
// older than maxAge at now, then the oldest beyond the max newest, and
// returns how many it forgot. Only regular files named as kept sessions
// are looked at: tokens, other files and links are left alone. A store
// whose directory is not there has none.
func (s TokenStore) ExpireSessions(now time.Time, maxAge time.Duration, max int) (int, error) {
	if s.Dir == "" || !filepath.IsAbs(s.Dir) {
		return 0, fmt.Errorf("%w: %q is not an absolute directory", ErrTokenStore, s.Dir)
	}
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrTokenStore, err)
	}
	type kept struct {
		name string
		mod  time.Time
	}
	var all []kept
	for _, e := range entries {
		if !e.Type().IsRegular() || !keptSessionFile().MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		all = append(all, kept{e.Name(), info.ModTime()})
	}
	// Newest first; the name breaks ties.
	slices.SortFunc(all, func(a, b kept) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	n := 0
	var errs []error
	for i, k := range all {
		if i < max && now.Sub(k.mod) <= maxAge {
			continue
		}
		if err := os.Remove(filepath.Join(s.Dir, k.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("%w: %w", ErrTokenStore, errors.Join(errs...))
	}
	return n, nil
}
