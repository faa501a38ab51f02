package stock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Trust: a settings file inside the workspace — the project's, or the
// store's own when the store lies inside the workspace — may have been
// written by anyone who could write the workspace: a cloned repository's
// authors, or a command the agent ran. What such a file says applies
// without asking only where it narrows authority (see Widens); the keys
// that widen it apply once the person has trusted that file's exact
// content (harness trust). Trust is remembered in the user's own
// configuration directory, outside every workspace, by the workspace's
// resolved path, the file's path and the SHA-256 of its content: a file
// whose content changes is untrusted again.

// TrustFileName is the name, beside the user's settings file, of the file
// that remembers which settings files the person trusts.
const TrustFileName = "trusted.json"

// ErrNoUserConfig: there is no user configuration directory to remember
// trust in ($XDG_CONFIG_HOME and $HOME are both unset).
var ErrNoUserConfig = errors.New("no user configuration directory ($XDG_CONFIG_HOME and $HOME are unset)")

// ErrTrustInWorkspace: the file that remembers trust lies inside the
// workspace, where a command could write it; trust is neither read from
// it nor written to it there.
var ErrTrustInWorkspace = errors.New("the trust file lies inside the workspace, where a command could write it")

// ErrTrustFile: the file that remembers trust cannot be read as one.
var ErrTrustFile = errors.New("bad trust file")

// TrustFile is the path of the file that remembers trust, beside the
// user's settings file (see UserSettingsFile); "" when there is none.
func TrustFile(getenv func(string) string) string {
	return besideUserSettings(getenv, TrustFileName)
}

// besideUserSettings is the path of name in the directory of the user's
// settings file (the user scope); "" when there is none.
func besideUserSettings(getenv func(string) string, name string) string {
	u := UserSettingsFile(getenv)
	if u == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(u), name)
}

// TrustEntry is the person's trust in one settings file's content.
type TrustEntry struct {
	// Workspace is the workspace root, symlinks resolved.
	Workspace string `json:"workspace"`
	// File is the settings file, its directory's symlinks resolved.
	File string `json:"file"`
	// SHA256 is the digest of the content trusted, hex.
	SHA256 string `json:"sha256"`
}

// Trust is what the trust file remembers.
type Trust struct {
	Trusted []TrustEntry `json:"trusted"`
	// Rules are the person's "always, for this project" (see
	// ScopeWorkspace), each under its workspace.
	Rules []ProjectRule `json:"rules,omitempty"`
}

// LoadTrust reads the trust file at path; a missing file trusts nothing.
func LoadTrust(path string) (Trust, error) {
	var t Trust
	if path == "" {
		return t, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return t, fmt.Errorf("read %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Trust{}, fmt.Errorf("%w %s: %v; nothing in it is trusted (remove it, or mend it, to trust again)", ErrTrustFile, path, err)
	}
	return t, nil
}

// Has reports whether the content of digest of file in workspace is
// trusted.
func (t Trust) Has(workspace, file, digest string) bool {
	return slices.Contains(t.Trusted, TrustEntry{Workspace: workspace, File: file, SHA256: digest})
}

// Grant trusts the content of digest of file in workspace, replacing any
// trust in another content of that file.
func (t *Trust) Grant(workspace, file, digest string) {
	t.Revoke(workspace, file)
	t.Trusted = append(t.Trusted, TrustEntry{Workspace: workspace, File: file, SHA256: digest})
}

// Revoke forgets the trust in file of workspace (every file of it, for
// file ""); it reports whether there was any.
func (t *Trust) Revoke(workspace, file string) bool {
	n := len(t.Trusted)
	t.Trusted = slices.DeleteFunc(t.Trusted, func(e TrustEntry) bool {
		return e.Workspace == workspace && (file == "" || e.File == file)
	})
	return len(t.Trusted) != n
}

// Save writes the trust file at path atomically (a temporary file renamed
// over it), readable by its owner alone.
func (t Trust) Save(path string) error {
	if path == "" {
		return ErrNoUserConfig
	}
	if t.Trusted == nil {
		t.Trusted = []TrustEntry{}
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save trust: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".trusted-*.json")
	if err != nil {
		return fmt.Errorf("save trust: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("save trust: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("save trust %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save trust %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save trust %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save trust %s: %w", path, err)
	}
	return nil
}

// UpdateTrust changes the trust file at path under a lock (a file
// beside it, path+".lock"), so two changes at once — two `harness trust`
// runs, a trust and an "always for this project" — both land: it reads
// the file, calls change and saves what change made, if it reports a
// change. A trust file that cannot be read is an error unless keepBroken,
// which starts from nothing (and so replaces the broken file).
func UpdateTrust(path string, keepBroken bool, change func(*Trust) (bool, error)) error {
	if path == "" {
		return ErrNoUserConfig
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save trust: %w", err)
	}
	lock, err := lockTrustFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("lock trust %s: %w", path, err)
	}
	defer lock.Close()
	t, err := LoadTrust(path)
	if err != nil && !(keepBroken && errors.Is(err, ErrTrustFile)) {
		return err
	}
	changed, err := change(&t)
	if err != nil || !changed {
		return err
	}
	return t.Save(path)
}

// digestOf is the SHA-256 of b, hex.
func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// resolved is path with every symlink resolved; for a path that does not
// exist, its nearest existing parent resolved, with the rest as it is.
func resolved(path string) string {
	path = filepath.Clean(path)
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	return filepath.Join(resolved(parent), filepath.Base(path))
}

// trustKey is how a settings file is named in the trust file: its
// directory resolved (the file itself is not followed: its content is what
// is trusted, wherever it leads).
func trustKey(path string) string {
	return filepath.Join(resolved(filepath.Dir(path)), filepath.Base(path))
}

// within reports whether path lies in dir (or is dir); both resolved.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// inWorkspace reports whether the file at path lies inside the workspace
// root: where it is named (as written, or its directory resolved), or
// where it leads (a symlink's target), any way.
func inWorkspace(root, path string) bool {
	r := resolved(root)
	return within(filepath.Clean(root), filepath.Clean(path)) || within(r, trustKey(path)) || within(r, resolved(path))
}

// trustFileOf is the trust file for the place: "" and ErrTrustInWorkspace
// when it lies inside the workspace (a $XDG_CONFIG_HOME there).
func (p Place) trustFileOf(getenv func(string) string) (string, error) {
	path := TrustFile(getenv)
	if path == "" {
		return "", ErrNoUserConfig
	}
	if inWorkspace(p.Root, path) {
		return "", fmt.Errorf("%w: %s (workspace %s); run harness with $XDG_CONFIG_HOME outside it", ErrTrustInWorkspace, path, p.Root)
	}
	return path, nil
}

// TrustSource trusts the content src was read with (its Digest), in the
// trust file getenv finds. Only a file inside the workspace needs it.
func (p Place) TrustSource(getenv func(string) string, src SettingsSource) error {
	path, err := p.trustFileOf(getenv)
	if err != nil {
		return err
	}
	if !src.Exists || src.Digest == "" {
		return fmt.Errorf("trust %s: the file is not there", src.Path)
	}
	return UpdateTrust(path, true, func(t *Trust) (bool, error) {
		t.Grant(resolved(p.Root), trustKey(src.Path), src.Digest)
		return true, nil
	})
}

// RevokeTrust forgets the trust in the workspace's settings files (the
// file at path alone, unless path is ""); it reports whether any was
// remembered.
func (p Place) RevokeTrust(getenv func(string) string, path string) (bool, error) {
	tf, err := p.trustFileOf(getenv)
	if err != nil {
		return false, err
	}
	key := ""
	if path != "" {
		key = trustKey(path)
	}
	var revoked bool
	err = UpdateTrust(tf, true, func(t *Trust) (bool, error) {
		revoked = t.Revoke(resolved(p.Root), key)
		return revoked, nil
	})
	return revoked && err == nil, err
}

// ErrNotTrustable: a file named to trust is neither a settings file
// inside the workspace nor an agent file there that names a model.
var ErrNotTrustable = errors.New("not a settings file inside this workspace (they are .harness/project.json and the store's config.json), nor an agent file there that names a model")

// TrustSources are the files trust applies to in the place p whose
// settings are l — the settings files inside the workspace that exist,
// and the agent files there that name a model (AgentTrustSources) — or,
// when names are given, those files only, in the order named. A name
// that is none of them is ErrNotTrustable.
func TrustSources(ctx context.Context, p Place, l Layered, getenv func(string) string, names []string) ([]SettingsSource, error) {
	out := append(l.Trustable(), AgentTrustSources(ctx, p, l.Settings, getenv)...)
	if len(names) == 0 {
		return out, nil
	}
	var picked []SettingsSource
	for _, n := range names {
		abs, err := filepath.Abs(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		i := slices.IndexFunc(out, func(s SettingsSource) bool { return s.Path == abs })
		if i < 0 {
			return nil, fmt.Errorf("%s: %w", n, ErrNotTrustable)
		}
		picked = append(picked, out[i])
	}
	return picked, nil
}

// Revocation is what forgetting the trust in one file did: Path is the
// file ("" for every settings file of the workspace), Had whether it was
// trusted.
type Revocation struct {
	Path string
	Had  bool
}

// RevokeTrustIn forgets the trust in files, one by one, or at once in
// every settings file of the workspace when all is set. It returns what
// each revocation did, up to the first error.
func (p Place) RevokeTrustIn(getenv func(string) string, files []SettingsSource, all bool) ([]Revocation, error) {
	if all {
		had, err := p.RevokeTrust(getenv, "")
		if err != nil {
			return nil, err
		}
		return []Revocation{{Had: had}}, nil
	}
	var out []Revocation
	for _, s := range files {
		had, err := p.RevokeTrust(getenv, s.Path)
		if err != nil {
			return out, err
		}
		out = append(out, Revocation{Path: s.Path, Had: had})
	}
	return out, nil
}
