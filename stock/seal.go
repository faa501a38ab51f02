package stock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/sealnote"
	"github.com/seed-7cc7a084/harness/thread"
)

// Seals (package seal): each person's signing key and witness log live in
// their own configuration directory, beside their settings and the trust
// they gave — SealDir, $XDG_CONFIG_HOME/harness/seal — never in a
// workspace or a store, and hidden from every sandboxed command (see
// NewStock). A session that drives threads seals the head of each thread
// a Resume leaves parked or ended (harness.Runtime.Sealer).

// SealDirName is the name, beside the user's settings file, of the
// directory that holds the person's key and witness log.
const SealDirName = "seal"

// ErrKeyInWorkspace: the person's seal directory lies inside the
// workspace or the store, where a command or the store's writer could
// read the key or rewrite the witness log; nothing is sealed with it.
var ErrKeyInWorkspace = errors.New("the seal directory lies inside the workspace or the store")

// SealDir is the directory of the person's key and witness log, beside
// the user's settings file (see UserSettingsFile); "" when there is none.
func SealDir(getenv func(string) string) string {
	return besideUserSettings(getenv, SealDirName)
}

// UserKey is the person's signing key, made on first use (see
// seal.OpenKey), and the path of its file.
func UserKey(getenv func(string) string) (k seal.Key, path string, made bool, err error) {
	dir := SealDir(getenv)
	if dir == "" {
		return seal.Key{}, "", false, ErrNoUserConfig
	}
	path = filepath.Join(dir, seal.KeyFile)
	k, made, err = seal.OpenKey(path)
	return k, path, made, err
}

// UserWitness is the person's witness log (its file may not exist yet).
func UserWitness(getenv func(string) string) (*seal.Witness, error) {
	dir := SealDir(getenv)
	if dir == "" {
		return nil, ErrNoUserConfig
	}
	return &seal.Witness{Path: filepath.Join(dir, seal.WitnessFile)}, nil
}

// StoreName names the place's store in a seal: the server of a remote
// store (without credentials), else the store's directory, resolved.
func (p Place) StoreName() string {
	if p.Remote != "" {
		if u, err := url.Parse(p.Remote); err == nil {
			u.User = nil
			return u.String()
		}
		return p.Remote
	}
	return resolved(p.Store)
}

// sealDirOf is the place's person's seal directory, refused
// (ErrKeyInWorkspace) when it lies inside the workspace or the store.
func (p Place) sealDirOf(getenv func(string) string) (string, error) {
	dir := SealDir(getenv)
	if dir == "" {
		return "", ErrNoUserConfig
	}
	if !filepath.IsAbs(dir) {
		// A relative $XDG_CONFIG_HOME is relative to wherever a command
		// runs: in the workspace, as likely as not.
		return "", fmt.Errorf("%w: %s is not an absolute path", ErrKeyInWorkspace, dir)
	}
	if inWorkspace(p.Root, dir) || (p.Remote == "" && inWorkspace(p.Store, dir)) {
		return "", fmt.Errorf("%w: %s (workspace %s, store %s); run harness with $XDG_CONFIG_HOME outside them", ErrKeyInWorkspace, dir, p.Root, p.Store)
	}
	return dir, nil
}

// Sealer is the person's sealer of the place's store's threads: their
// key (made on first use) and witness log.
func (p Place) Sealer(getenv func(string) string) (*seal.Sealer, error) {
	dir, err := p.sealDirOf(getenv)
	if err != nil {
		return nil, err
	}
	k, _, err := seal.OpenKey(filepath.Join(dir, seal.KeyFile))
	if err != nil {
		return nil, err
	}
	return &seal.Sealer{Key: k, Witness: &seal.Witness{Path: filepath.Join(dir, seal.WitnessFile)}, Store: p.StoreName()}, nil
}

// SealCheck says whose seals VerifySeals checks, and where else it looks
// for them.
type SealCheck struct {
	// Keys are other people's keys to trust: at least one of them must
	// have sealed the thread.
	Keys []seal.PublicKey
	// Witnesses are more witness logs to read (someone else's), beside
	// the person's own.
	Witnesses []string
}

// SealCheckOf is the check of others' seals that keys and witnesses ask
// for: each of keys is a public key (ed25519:…) or a file of them, one a
// line (seal.ReadKeys); each of witnesses is a witness log, which must be
// there. A key that cannot be read is ErrSealKeys, a witness log
// ErrWitnessLog.
func SealCheckOf(keys, witnesses []string) (SealCheck, error) {
	var c SealCheck
	for _, k := range keys {
		ks, err := seal.ReadKeys(k)
		if err != nil {
			return c, argError{err, ErrSealKeys}
		}
		c.Keys = append(c.Keys, ks...)
	}
	for _, w := range witnesses {
		if _, err := os.Stat(w); err != nil {
			return c, argError{err, ErrWitnessLog}
		}
		c.Witnesses = append(c.Witnesses, w)
	}
	return c, nil
}

// VerifySeals checks the thread's log in store against the seals of it in
// the person's witness log and in c.Witnesses (see seal.Check). The
// person's own key, if they have one, is trusted (none is made), and so
// are c.Keys. A witness log whose chain is broken is an error wrapping
// seal.ErrWitnessBroken; its entries before the break are checked still.
func (p Place) VerifySeals(ctx context.Context, getenv func(string) string, store thread.Store, id string, c SealCheck) (seal.Report, error) {
	var trusted []seal.PublicKey
	var paths []string
	own := ""
	if dir := SealDir(getenv); dir != "" {
		k, err := seal.LoadKey(filepath.Join(dir, seal.KeyFile))
		switch {
		case err == nil:
			trusted = append(trusted, k.Public())
		case !errors.Is(err, fs.ErrNotExist):
			return seal.Report{Thread: id}, err
		}
		own = filepath.Join(dir, seal.WitnessFile)
		paths = append(paths, own)
	}
	for _, w := range c.Witnesses {
		if !slices.Contains(paths, w) {
			paths = append(paths, w)
		}
	}
	var found []seal.Found
	var broken []error
	var unread []string
	if p.Root != "" {
		// The seals noted in the workspace's repository (if any): each
		// checks by its signature and key, as a witness log's do; one
		// already found in a witness log is not counted twice.
		sn, err := sealnote.Read(ctx, p.Root)
		switch {
		case errors.Is(err, sealnote.ErrUnusable):
			// The notes ref says something false of itself: a tamper.
			broken = append(broken, fmt.Errorf("the seal notes of %s: %w", p.Root, err))
		case err != nil:
			// git could not read them (a repository harness will not
			// run git in, a timeout): the witness logs still count.
			unread = append(unread, fmt.Sprintf("the seal notes of %s were not read: %v", p.Root, err))
		}
		found = append(found, sn.Found...)
		if sn.Skipped > 0 {
			unread = append(unread, fmt.Sprintf("%s of %s not read (more than %d notes, or a note over %d bytes)", present.Plural(sn.Skipped, "note", "notes"), sealnote.Ref, sealnote.MaxNotes, sealnote.MaxNoteBytes))
		}
	}
	fromNotes := len(found)
	for _, path := range paths {
		if _, err := os.Stat(path); err != nil && path != own {
			return seal.Report{Thread: id}, fmt.Errorf("witness log: %w", err)
		}
		fs, err := (&seal.Witness{Path: path}).Read()
		found = append(found, fs...)
		if err != nil {
			if !errors.Is(err, seal.ErrWitnessBroken) {
				return seal.Report{Thread: id}, err
			}
			broken = append(broken, err)
		}
	}
	found = dedupeSeals(found, fromNotes)
	r, err := seal.Check(ctx, store, id, found, seal.CheckOptions{Store: p.StoreName(), Trusted: trusted, Require: c.Keys})
	r.Unread = unread
	if err != nil {
		return r, err
	}
	return r, errors.Join(append([]error{r.Err()}, broken...)...)
}

// dedupeSeals leaves out of found[:notes] (the seals read from git notes)
// that a witness log's entry (found[notes:]) is, field for field and
// signature: one seal, found twice. The witness log's are kept, and come
// first.
func dedupeSeals(found []seal.Found, notes int) []seal.Found {
	seen := map[string]bool{} // the entries already in out, as signed with their signature
	key := func(f seal.Found) string { return string(f.Message()) + "\x00sig" + string(f.Sig) }
	for _, f := range found[notes:] {
		seen[key(f)] = true
	}
	out := slices.Clone(found[notes:])
	for _, f := range found[:notes] {
		if !seen[key(f)] {
			seen[key(f)] = true
			out = append(out, f)
		}
	}
	return out
}

// NoteAnchor is a Sealer's Anchor that writes each seal as a line of a
// git note on the workspace's HEAD (sealnote.Write); a workspace in no git
// repository, or with no commit yet, is left as it is.
func (p Place) NoteAnchor() func(ctx context.Context, e seal.Entry) error {
	return func(ctx context.Context, e seal.Entry) error {
		_, err := sealnote.Write(ctx, p.Root, e)
		return err
	}
}

// sealing is a runtime's sealer: the stock's, telling a front end of a
// head it could not seal.
type sealing struct {
	s        *seal.Sealer
	unsealed func(thread.Head, error)
}

func (s sealing) SealHead(ctx context.Context, store thread.Store, head thread.Head) error {
	err := s.s.SealHead(ctx, store, head)
	if err != nil && s.unsealed != nil {
		s.unsealed(head, err)
	}
	return err
}

// CheckHead is the sealer's (harness.HeadChecker): a Resume of a log
// behind the person's own seal of it runs nothing.
func (s sealing) CheckHead(ctx context.Context, store thread.Store, head thread.Head) error {
	return s.s.CheckHead(ctx, store, head)
}

var _ harness.HeadChecker = sealing{}

// SealHead checks the log of thread id in store as replay's verification
// does (audit.VerifyLog through actor), then signs the head it checked
// with the person's key into their witness log (Sealer): a log that does
// not verify is not sealed, nor one that grew while it was checked (seal
// it again). With gitNote the seal is also written as a git note
// (NoteAnchor). It returns the seal and the witness log it is in.
func (p Place) SealHead(ctx context.Context, getenv func(string) string, store thread.Store, actor harness.Actor, id string, gitNote bool) (seal.Entry, string, error) {
	head, err := store.Head(ctx, id)
	if err != nil {
		return seal.Entry{}, "", err
	}
	if err := audit.VerifyLog(ctx, store, actor, id); err != nil {
		return seal.Entry{}, "", fmt.Errorf("not sealed: %w", err)
	}
	if now, err := store.Head(ctx, id); err != nil {
		return seal.Entry{}, "", err
	} else if now != head {
		return seal.Entry{}, "", fmt.Errorf("not sealed: thread %s grew from seq %d to %d while its log was checked; seal it again", id, head.Seq, now.Seq)
	}
	sl, err := p.Sealer(getenv)
	if err != nil {
		return seal.Entry{}, "", err
	}
	if gitNote {
		sl.Anchor = p.NoteAnchor()
	}
	e, err := sl.Seal(ctx, store, head)
	return e, sl.Witness.Path, err
}
