package stock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// Settings are defaults for the commands that run threads, read from up to
// three files, weakest first (see Scope):
//
//	$XDG_CONFIG_HOME/harness/config.json   user: every workspace of yours
//	<root>/.harness/project.json           project: committed, for everyone
//	<store>/config.json                    local: this checkout only
//
// A setting a stronger file gives replaces a weaker file's; patterns
// (allow, deny) add up, so a deny anywhere applies. Flags given on a
// command line are stronger still: patterns from both apply, and a flag's
// mode or model replaces the files'.
//
//	{
//	  "model": "scripted:script.jsonl",
//	  "approve": "writes",
//	  "allow": ["run_command:go test *"],
//	  "deny": ["run_command:rm *", "write_file:.github/*"],
//	  "max_turns": 100,
//	  "max_steps": 200,
//	  "mcpServers": {"fs": {"command": "mcp-server-filesystem", "args": ["."]}}
//	}
type Settings struct {
	// Model is the model spec used when a command names none.
	Model string `json:"model,omitempty"`
	// Approve is the approval mode: ask, writes or all (see ApproveMode).
	Approve string `json:"approve,omitempty"`
	// Allow and Deny are tool patterns (see ParsePattern).
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// MaxTurns bounds the model turns of a thread a command drives
	// (harness.Config.MaxTurns; 0 is no bound); nil leaves it to the command.
	MaxTurns *int `json:"max_turns,omitempty"`
	// MaxSteps bounds the steps one command runs before it stops, with
	// the thread resumable (harness.Config.MaxSteps); nil leaves it to the
	// command.
	MaxSteps *int `json:"max_steps,omitempty"`
	// Sandbox is the mode of the sandbox commands run in: workspace-write
	// (the default), read-only or off (see package sandbox).
	Sandbox string `json:"sandbox,omitempty"`
	// Network lets commands use the network.
	Network bool `json:"network,omitempty"`
	// MCPServers are MCP servers whose tools the model is offered as
	// mcp__<server>__<tool>, in the shape of Claude Code's .mcp.json (see
	// package mcp). Their calls ask a person by default; patterns such as
	// "mcp__github__*" answer for them as for any tool. Servers from
	// several files add up; a stronger file's server of the same name
	// replaces a weaker one's.
	MCPServers mcp.Servers `json:"mcpServers,omitempty"`
	// Serve configures the server that holds the store for every other
	// process (package serve). A stronger file's replaces a weaker one's.
	Serve *ServeSettings `json:"serve,omitempty"`
}

// Scope names a settings file by whom it serves.
type Scope string

// The settings files, weakest first.
const (
	// ScopeUser is the user's own file, for every workspace:
	// $XDG_CONFIG_HOME/harness/config.json (~/.config/harness/config.json).
	ScopeUser Scope = "user"
	// ScopeProject is the workspace's committed file, shared by everyone
	// who works on it: <root>/.harness/project.json.
	ScopeProject Scope = "project"
	// ScopeLocal is the file in the store: <store>/config.json, this
	// checkout's own (the store is not committed).
	ScopeLocal Scope = "local"
)

// ProjectFile is the name, in the workspace's .harness directory, of the
// committed settings file.
const ProjectFile = "project.json"

// ErrUnknownSetting: a settings file names a key this program does not
// know (a typo, or a newer program's). The other keys are read.
var ErrUnknownSetting = errors.New("unknown setting")

// SettingsSource is one settings file and what it says.
type SettingsSource struct {
	Scope Scope
	Path  string
	// Exists reports whether the file is there.
	Exists bool
	// Settings are what the file says; Set the keys it sets.
	Settings Settings
	Set      []string
	// Unknown are the keys it holds that this program does not know.
	Unknown []string
	// Err is why the file could not be read, if it could not.
	Err error
}

// Layered are a place's settings: each file, weakest first, and what they
// say together.
type Layered struct {
	Settings Settings
	Sources  []SettingsSource
	// From says, for each key set, the scopes that set it: the last one for
	// a single value, every one that added for a pattern list.
	From map[string][]Scope
}

// SettingsFile is the path of the store's own settings file (ScopeLocal).
func (p Place) SettingsFile() string { return filepath.Join(p.Store, "config.json") }

// ProjectSettingsFile is the path of the workspace's committed settings
// file (ScopeProject).
func (p Place) ProjectSettingsFile() string { return filepath.Join(p.Root, StoreDir, ProjectFile) }

// UserSettingsFile is the path of the user's settings file, from the
// environment getenv reads: $XDG_CONFIG_HOME/harness/config.json, else
// $HOME/.config/harness/config.json; "" when neither is set.
func UserSettingsFile(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "harness", "config.json")
}

// LoadSettings reads the place's settings files (the user's from the
// process's environment) and returns what they say together; see
// LoadLayered.
func (p Place) LoadSettings() (Settings, error) {
	l, err := p.LoadLayered(os.Getenv)
	return l.Settings, err
}

// LoadLayered reads the user's file (found from getenv: see
// UserSettingsFile), the project's and the store's, and merges them. A
// missing file is no settings. A file that names keys this program does
// not know is read for the rest, and the error wraps ErrUnknownSetting,
// naming the file and the keys: a command that only reads may warn and go
// on with what was read. Any other fault — a file that is not one JSON
// object, a value of the wrong type or out of range — is an error naming
// the file and the key; that file is left out.
func (p Place) LoadLayered(getenv func(string) string) (Layered, error) {
	l := Layered{From: map[string][]Scope{}}
	files := []struct {
		scope Scope
		path  string
		rel   string // what a relative script path is relative to
	}{
		{ScopeUser, UserSettingsFile(getenv), ""},
		{ScopeProject, p.ProjectSettingsFile(), p.Root},
		{ScopeLocal, p.SettingsFile(), p.Root},
	}
	if p.ProjectSettingsFile() == p.SettingsFile() {
		files = slices.Delete(files, 1, 2) // a store named .harness/project.json is a stretch; read it once
	}
	var errs []error
	for _, f := range files {
		if f.path == "" {
			continue
		}
		rel := f.rel
		if rel == "" {
			rel = filepath.Dir(f.path)
		}
		src := readSettings(f.scope, f.path, rel)
		l.Sources = append(l.Sources, src)
		if src.Err != nil {
			errs = append(errs, src.Err)
		}
		if src.Err != nil && !errors.Is(src.Err, ErrUnknownSetting) {
			continue
		}
		l.merge(src)
	}
	return l, errors.Join(errs...)
}

// merge lays src over what l says.
func (l *Layered) merge(src SettingsSource) {
	s, into := src.Settings, &l.Settings
	for _, key := range src.Set {
		switch key {
		case "model":
			into.Model = s.Model
		case "approve":
			into.Approve = s.Approve
		case "allow":
			into.Allow = append(into.Allow, s.Allow...)
		case "deny":
			into.Deny = append(into.Deny, s.Deny...)
		case "max_turns":
			into.MaxTurns = s.MaxTurns
		case "max_steps":
			into.MaxSteps = s.MaxSteps
		case "sandbox":
			into.Sandbox = s.Sandbox
		case "network":
			into.Network = s.Network
		case "serve":
			into.Serve = s.Serve
		case "mcpServers":
			if into.MCPServers == nil {
				into.MCPServers = mcp.Servers{}
			}
			maps.Copy(into.MCPServers, s.MCPServers)
		}
		if key == "allow" || key == "deny" || key == "mcpServers" {
			l.From[key] = append(l.From[key], src.Scope)
		} else {
			l.From[key] = []Scope{src.Scope}
		}
	}
}

// SettingKeys are the keys a settings file may hold, in the order Settings
// declares them.
func SettingKeys() []string {
	t := reflect.TypeFor[Settings]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	return keys
}

// readSettings reads one settings file; a relative script path in it is
// relative to rel.
func readSettings(scope Scope, path, rel string) SettingsSource {
	src := SettingsSource{Scope: scope, Path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return src
	}
	src.Exists = true
	if err != nil {
		src.Err = fmt.Errorf("read settings %s: %w", path, err)
		return src
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil || raw == nil || dec.More() {
		if err == nil {
			err = errors.New("want one JSON object")
		}
		src.Err = fmt.Errorf("settings %s: %v (want one object of %s)", path, err, strings.Join(SettingKeys(), ", "))
		return src
	}
	known := SettingKeys()
	for key := range raw {
		if !slices.Contains(known, key) {
			src.Unknown = append(src.Unknown, key)
			delete(raw, key)
		}
	}
	slices.Sort(src.Unknown)
	for _, key := range known {
		if _, ok := raw[key]; ok {
			src.Set = append(src.Set, key)
		}
	}
	rest, _ := json.Marshal(raw)
	dec = json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	var s Settings
	if err := dec.Decode(&s); err != nil {
		src.Err = fmt.Errorf("settings %s: %w", path, err)
		return src
	}
	if err := s.check(); err != nil {
		src.Err = fmt.Errorf("settings %s: %w", path, err)
		return src
	}
	if s.Model != "" {
		// A relative script path in a file is relative to the workspace
		// (the user's file: to its own directory).
		if p, ok := strings.CutPrefix(s.Model, scriptedScheme); ok && p != "" && !filepath.IsAbs(p) {
			s.Model = scriptedScheme + filepath.Join(rel, p)
		}
	}
	src.Settings = s
	if len(src.Unknown) > 0 {
		src.Err = fmt.Errorf("settings %s: %w %s (known: %s)", path, ErrUnknownSetting, quoteAll(src.Unknown), strings.Join(SettingKeys(), ", "))
	}
	return src
}

// check refuses values that cannot work.
func (s Settings) check() error {
	if err := s.Serve.validate(); err != nil {
		return err
	}
	if err := s.MCPServers.Validate(); err != nil {
		return fmt.Errorf("mcpServers: %w", err)
	}
	if _, err := sandbox.ParseMode(s.Sandbox); err != nil && s.Sandbox != "" {
		return fmt.Errorf("sandbox: %w", err)
	}
	switch s.Approve {
	case "", "ask", "writes", "all":
	default:
		return fmt.Errorf("approve %q: want ask, writes or all", s.Approve)
	}
	if s.MaxTurns != nil && *s.MaxTurns < 0 {
		return fmt.Errorf("max_turns %d: want a number of model turns, or 0 for no bound", *s.MaxTurns)
	}
	if s.MaxSteps != nil && *s.MaxSteps < 1 {
		return fmt.Errorf("max_steps %d: want a number of steps, at least 1", *s.MaxSteps)
	}
	return nil
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
