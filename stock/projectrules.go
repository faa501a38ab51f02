package stock

import (
	"errors"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/drive"
)

// A person's "always, for this project": an allow rule they gave at a
// prompt (or on the page) for every later thread of one workspace. It is
// kept in the user scope — the trust file, beside the workspace's trust
// records, under the workspace's resolved path — never in a file inside
// the workspace, where a command or a cloned repository could write it.
// LoadLayered reads a workspace's rules as a layer of their own
// (ScopeWorkspace), after the user's file; a thread's policy names that
// scope and the trust file as the source of each such rule.
//
// A rule is bound to the workspace directory itself as well as its path
// (ProjectRule.Dir: device, inode, birth time): a repository removed and
// another cloned at the same path — a directory the person never gave a
// rule for — inherits none. A rule kept before rules were bound (no Dir)
// applies by path alone, as it did when it was given.

// ScopeWorkspace is the person's own rules for one workspace, kept in the
// trust file (TrustFile) under the workspace's entry: "always, for this
// project".
const ScopeWorkspace Scope = "workspace"

// ErrProjectRule: a rule for the project that cannot be kept — it does
// not parse, or the trust file cannot be read (it is left as it is).
var ErrProjectRule = errors.New("the rule for the project cannot be kept")

// ProjectRule is one allow rule kept for a workspace.
type ProjectRule struct {
	// Workspace is the workspace root, symlinks resolved.
	Workspace string `json:"workspace"`
	// Allow is the allow pattern (see drive.Pattern).
	Allow string `json:"allow"`
	// Dir names the workspace directory the rule was given for, not
	// its path (see dirIdentity); a rule kept before rules were bound
	// has none and applies by path.
	Dir string `json:"dir,omitempty"`
	// By is who gave it.
	By string `json:"by,omitempty"`
}

// RulesOf are the allow patterns kept for workspace, the directory dir
// names (see ProjectRule.Dir), in the order given.
func (t Trust) RulesOf(workspace, dir string) []string {
	var out []string
	for _, r := range t.Rules {
		if r.Workspace == workspace && (r.Dir == "" || sameDir(r.Dir, dir)) && !slices.Contains(out, r.Allow) {
			out = append(out, r.Allow)
		}
	}
	return out
}

// AddRule keeps allow for workspace, the directory dir names; it
// reports whether it was new. A rule for another directory that once
// stood at the same path is dropped: it can never apply again.
func (t *Trust) AddRule(workspace, dir, allow, by string) bool {
	t.Rules = slices.DeleteFunc(t.Rules, func(r ProjectRule) bool {
		return r.Workspace == workspace && r.Dir != "" && dir != "" && !sameDir(r.Dir, dir)
	})
	if slices.Contains(t.RulesOf(workspace, dir), allow) {
		return false
	}
	t.Rules = append(t.Rules, ProjectRule{Workspace: workspace, Allow: allow, Dir: dir, By: by})
	return true
}

// RulesElsewhere are the rules kept for workspace that were given for
// another directory once at that path (removed and made again, or
// another clone moved there): they do not apply to dir.
func (t Trust) RulesElsewhere(workspace, dir string) []ProjectRule {
	var out []ProjectRule
	for _, r := range t.Rules {
		if r.Workspace == workspace && r.Dir != "" && !sameDir(r.Dir, dir) {
			out = append(out, r)
		}
	}
	return out
}

// ProjectRulesElsewhere are the rules the trust file getenv finds keeps
// for the place's workspace path that were given for another directory
// once there, which do not apply (see Trust.RulesElsewhere), and that
// file; none when it cannot be read or lies inside the workspace.
func (p Place) ProjectRulesElsewhere(getenv func(string) string) ([]ProjectRule, string) {
	path, err := p.trustFileOf(getenv)
	if err != nil {
		return nil, ""
	}
	t, err := LoadTrust(path)
	if err != nil {
		return nil, path
	}
	root := resolved(p.Root)
	return t.RulesElsewhere(root, dirIdentity(root)), path
}

// projectLayer is the layer of the rules trust keeps for the workspace
// root (resolved), read from the trust file at path; ok is false when it
// keeps none.
func projectLayer(trust Trust, root, path string) (SettingsSource, bool) {
	rules := trust.RulesOf(root, dirIdentity(root))
	if len(rules) == 0 {
		return SettingsSource{}, false
	}
	return SettingsSource{Scope: ScopeWorkspace, Path: path, Exists: true, Trusted: true,
		Settings: Settings{Allow: rules}, Set: []string{"allow"}}, true
}

// ProjectRuleFile is where the rules for the place's workspace are kept:
// the trust file getenv finds. It is an error wrapping
// ErrTrustInWorkspace when that lies inside the workspace, and
// ErrNoUserConfig when there is none.
func (p Place) ProjectRuleFile(getenv func(string) string) (string, error) {
	return p.trustFileOf(getenv)
}

// KeepProjectRule keeps the allow pattern rule for the place's workspace,
// given by by (see ScopeWorkspace), and returns it as the layer a
// thread's policy is amended with (Session.AmendPolicy): its scope and
// file are the rule's source. A rule kept already is kept once. A rule
// that does not parse, or a trust file that cannot be read, wraps
// ErrProjectRule and nothing is written.
func (p Place) KeepProjectRule(getenv func(string) string, rule, by string) (SettingsSource, error) {
	pat, err := drive.ParsePattern(rule)
	if err != nil {
		return SettingsSource{}, fmt.Errorf("%w: %w", ErrProjectRule, err)
	}
	rule = pat.String()
	path, err := p.trustFileOf(getenv)
	if err != nil {
		return SettingsSource{}, fmt.Errorf("%w: %w", ErrProjectRule, err)
	}
	root := resolved(p.Root)
	err = UpdateTrust(path, false, func(t *Trust) (bool, error) {
		return t.AddRule(root, dirIdentity(root), rule, by), nil
	})
	if err != nil {
		return SettingsSource{}, fmt.Errorf("%w: %w", ErrProjectRule, err)
	}
	return SettingsSource{Scope: ScopeWorkspace, Path: path, Exists: true, Trusted: true,
		Settings: Settings{Allow: []string{rule}}, Set: []string{"allow"}}, nil
}
