package stock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/thread"
)

// Front is how a front end that acts for a person in a directory (the
// command line) opens the workspace's sessions: where it locates the
// workspace, the store it names, its environment, how long it waits for
// a store another process holds, and what it tells the person — each
// warning once per Front where once is enough.
type Front struct {
	// Dir is the directory the workspace is located from; "" is the
	// current directory.
	Dir string
	// Store names the store ("" locates it; see LocateFrom).
	Store  string
	Getenv func(string) string
	// Wait is how long an open waits for a store another process holds.
	Wait time.Duration
	// Version is the program's, recorded in what its runtimes append.
	Version string
	// Warn is told, as one line escaped for a terminal, what the person
	// should know: settings left out as untrusted, a settings file that
	// could not be read, a store nested in a repository, threads that
	// are not sealed.
	Warn func(line string)

	// noticed and trusted: the nested store and the untrusted settings
	// were said.
	noticed, trusted bool
}

// Place locates the workspace of Dir. A number of replicas that cannot
// be is ErrReplicas.
func (f *Front) Place() (Place, error) {
	dir := f.Dir
	if dir == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return Place{}, fmt.Errorf("current directory: %w", err)
		}
		dir = cwd
	}
	return LocateFrom(dir, f.Store, f.Getenv)
}

// warn tells the person line.
func (f *Front) warn(format string, args ...any) {
	if f.Warn != nil {
		f.Warn(fmt.Sprintf(format, args...))
	}
}

// NewSession makes the session of the place as o says (NewSession), with
// the Front's environment, wait and version, and says what it should: a
// thread's head that could not be sealed (unless o is told of them
// itself), the settings left out as untrusted (once), a settings file a
// lenient session could not read, threads that cannot be sealed here.
func (f *Front) NewSession(p Place, o SessionOptions) (*Session, error) {
	o.Getenv, o.Wait = f.Getenv, f.Wait
	if o.OnUnsealed == nil {
		o.OnUnsealed = func(head thread.Head, err error) {
			if errors.Is(err, seal.ErrNotAnchored) {
				f.warn("warning: thread %s at seq %d is sealed in your witness log, but its git note was not written: %s", head.Thread, head.Seq, present.EscapeLine(err.Error()))
				return
			}
			f.warn("warning: thread %s at seq %d is not sealed: %s", head.Thread, head.Seq, present.EscapeLine(err.Error()))
		}
	}
	o.Harness = append([]harness.Option{func(c *harness.Config) { c.Version = f.Version }}, o.Harness...)
	s, err := NewSession(p, o)
	if err != nil {
		return nil, err
	}
	if n := s.Notice(); n != "" && !f.trusted {
		f.trusted = true
		f.warn("%s", present.EscapeLine(n))
	}
	if s.SettingsErr != nil {
		f.warn("warning: %s; going on without it", present.EscapeLine(s.SettingsErr.Error()))
	}
	if s.Stock.Unsealed != nil {
		f.warn("warning: threads are not sealed: %s", present.EscapeLine(s.Stock.Unsealed.Error()))
	}
	return s, nil
}

// Open opens the session's store (Session.Open). A store nested inside a
// repository is never adopted silently — it may have been planted — and
// the person is told which it is, once.
func (f *Front) Open(ctx context.Context, s *Session) error {
	if p := s.Place; p.Within != "" && p.Exists && p.Remote == "" && !f.noticed {
		f.noticed = true
		f.warn("using the store %s of %s, nested inside the repository %s (not %s)",
			present.EscapeLine(p.Store), present.EscapeLine(p.Root), present.EscapeLine(p.Within), present.EscapeLine(filepath.Join(p.Within, StoreDir)))
	}
	return s.Open(ctx)
}

// Whoami is who answers from this machine, for the record: the local
// user's login name, else $USER, else "someone". An answer names who gave
// it from a channel the agent cannot reach — the account the front end
// runs as — never a name given as text.
func Whoami(getenv func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := getenv("USER"); u != "" {
		return u
	}
	return "someone"
}
