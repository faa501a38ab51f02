package stock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/model"
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
// mode or model replaces the files'. Files, flags and a thread's recorded
// policy combine in one merge (Merge, Layered.Over, Amend).
//
// A file inside the workspace (the project's; the store's when the store
// is there) is untrusted: what it narrows applies, what it widens (see
// Widens) only once the person trusted its content (see TrustFile).
//
//	{
//	  "model": "scripted:script.jsonl",
//	  "approve": "writes",
//	  "allow": ["run_command:go test *"],
//	  "deny": ["run_command:rm *", "write_file:.github/*"],
//	  "max_turns": 100,
//	  "max_steps": 200,
//	  "context_window": 200000,
//	  "max_output_tokens": 8192,
//	  "instructions_max_bytes": 65536,
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
	// ContextWindow is the model's context window in tokens
	// (harness.Config.ContextWindow): past 80% of it, as the provider's
	// usage counts say, older turns are summarized by the model. nil or 0
	// is a window not known: only the size bound compacts, extractively.
	ContextWindow *int `json:"context_window,omitempty"`
	// MaxOutputTokens bounds the tokens the model writes in one turn
	// (model.WithMaxTokens); nil or 0 is the provider's default. An
	// answer cut off there is recorded as cut and the model asked to go
	// on.
	MaxOutputTokens *int64 `json:"max_output_tokens,omitempty"`
	// Sandbox is the mode of the sandbox commands run in: workspace-write
	// (the default), read-only or off (see package sandbox).
	Sandbox string `json:"sandbox,omitempty"`
	// Network lets commands use the network.
	Network bool `json:"network,omitempty"`
	// NetworkAllow is an allow-list of hosts ("github.com",
	// "*.example.com", "proxy.golang.org:443", "127.0.0.1:8080"):
	// commands have no network of their own but a proxy the harness runs
	// that reaches only these (see NetworkRule and package
	// sandbox/netproxy). A stronger layer's list replaces a weaker one's;
	// a list that reaches a host the weaker layers do not widens.
	NetworkAllow []string `json:"network_allow,omitempty"`
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
	// InstructionsMaxBytes bounds each instruction file (AGENTS.md) given
	// to the model; nil is DefaultInstructionsMax. A larger file is left
	// out, and the record says so.
	InstructionsMaxBytes *int64 `json:"instructions_max_bytes,omitempty"`
	// Hooks are commands run at events of every thread (see HookSettings):
	// before and after each tool call, and so on. Hooks from several files
	// add up, the weaker file's first.
	Hooks HookSettings `json:"hooks,omitempty"`
	// Prices override the shipped price table (model.DefaultPrices),
	// model by model: "openai:gpt-4o": {"input": 2.5, "output": 10,
	// "cache_read": 1.25}, in US dollars per million tokens. Only the
	// user's own file sets them: what a turn cost is the person's
	// account, not something a repository may say.
	Prices map[string]model.Price `json:"prices,omitempty"`
	// LoopGuard is how many times in a row the model may make the same
	// tool call before the next waits for a person (harness.Config.
	// LoopGuard); 0 is no guard; nil is DefaultLoopGuard.
	LoopGuard *int `json:"loop_guard,omitempty"`
	// Worktrees is when children work in git worktrees of their own
	// (harness.Config.Worktrees): "parallel" (the default: children
	// delegated in parallel), "always" or "off" (they share the
	// workspace). Fewer worktrees than a weaker layer says widens.
	Worktrees string `json:"worktrees,omitempty"`
	// WorktreeMerge is what the end of a thread in a worktree of its own
	// (a worker's) does with its branch (harness.Config.WorktreeMerge):
	// "ask" (the default: offer a person the merge into the workspace, a
	// write approved as any other) or "branch" (leave the change on the
	// branch, named). A file that is not trusted may choose branch, never
	// ask over a layer that chose branch: an offered merge may write the
	// workspace.
	WorktreeMerge string `json:"worktree_merge,omitempty"`
	// MaxCost and MaxTokens are the budget of a thread's tree, in US
	// dollars and in tokens (input and output), that a thread records
	// when it starts (budget.set); nil or 0 is none. A tree whose budget
	// cannot cover a model turn waits for a person to raise it. A file
	// that is not trusted may lower them (or set one where there is
	// none), never raise or remove one.
	MaxCost   *float64 `json:"max_cost,omitempty"`
	MaxTokens *int64   `json:"max_tokens,omitempty"`
	// SealGitNotes writes each seal also as a git note on the workspace's
	// HEAD (sealnote.Ref), where the workspace is a git repository. Only
	// the user's own file (or the command line) sets it: whether the
	// person's seals go into a repository is theirs to say.
	SealGitNotes bool `json:"seal_git_notes,omitempty"`
}

// Scope names a layer of settings by whom it serves.
type Scope string

// The layers of settings, weakest first.
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
	// ScopeFlag is the command line: what a person typed.
	ScopeFlag Scope = "flag"
	// ScopeWorkspace (projectrules.go) is the person's rules for one
	// workspace, kept outside it, between the user's file and the
	// project's.
	// ScopeAnswer is a person's answer at a prompt ("always").
	ScopeAnswer Scope = "answer"
	// ScopeThread is a thread's own recorded policy, as a layer a command
	// amends (see Amend).
	ScopeThread Scope = "thread"
)

// ProjectFile is the name, in the workspace's .harness directory, of the
// committed settings file.
const ProjectFile = "project.json"

// The bounds a command applies when no layer sets them.
const (
	DefaultMaxTurns = 50
	DefaultMaxSteps = 100
	// DefaultLoopGuard is the loop guard's bound (harness.Config.LoopGuard)
	// when no settings say.
	DefaultLoopGuard = 3
)

// SettingsSource is one layer of settings — a file, or the command line —
// and what it says.
type SettingsSource struct {
	Scope Scope
	// Path is the file; "" for the command line.
	Path string
	// Exists reports whether the file is there.
	Exists bool
	// Digest is the SHA-256 of the file's content as read, hex.
	Digest string
	// Inside reports whether the file lies inside the workspace (where it
	// is named, or where a symlink leads): anyone who could write the
	// workspace could have written it.
	Inside bool
	// Trusted reports whether what the layer widens applies: the user's
	// file, a file outside the workspace, the command line, or a file
	// inside whose content the person trusted (harness trust).
	Trusted bool
	// Settings are what the layer says; Set the keys it sets.
	Settings Settings
	Set      []string
	// Values are the keys it sets as the file writes them.
	Values map[string]json.RawMessage
	// Unknown are the keys it holds that this program does not know.
	Unknown []string
	// Err is why the file could not be read, if it could not.
	Err error
	// Widens are the keys it sets that widen authority beyond what the
	// weaker layers (and the defaults) give; Applied the keys that took
	// effect; Ignored the widening keys left out, the layer not being
	// trusted. The merge sets them.
	Widens, Applied, Ignored []string
}

// Layered are a place's settings: each layer, weakest first, and what
// they say together.
type Layered struct {
	Settings Settings
	Sources  []SettingsSource
	// From says, for each key set, the scopes that set it: the last one for
	// a single value, every one that added for a pattern list.
	From map[string][]Scope
	// recorded are the sources of the rules of a recorded policy, for the
	// ScopeThread layer (see Amend).
	recorded []facts.RuleSource
	// Hooks are the hooks the layers declare, weakest first: those of an
	// untrusted layer too, not Trusted, which do not run.
	Hooks []HookInForce
}

// Prices is the price table model turns are priced by: the shipped one,
// with the user's own prices over it (its version then names their
// digest: the first 12 digits of the SHA-256 of their JSON, keys sorted).
func (l *Layered) Prices() model.Prices {
	b, _ := json.Marshal(l.Settings.Prices) // a map's keys are sorted
	return model.DefaultPrices().With("user:"+digestOf(b)[:12], l.Settings.Prices)
}

// SettingsFile is the path of the store's own settings file (ScopeLocal).
func (p Place) SettingsFile() string { return filepath.Join(p.Store, "config.json") }

// ProjectSettingsFile is the path of the workspace's committed settings
// file (ScopeProject).
func (p Place) ProjectSettingsFile() string { return filepath.Join(p.Root, StoreDir, ProjectFile) }

// UserSettingsFile is the path of the user's settings file, from the
// environment getenv reads: $XDG_CONFIG_HOME/harness/config.json, else
// $HOME/.config/harness/config.json; "" when neither is set. A relative
// value is not a place (the XDG spec says to ignore it): relative to the
// current directory, it would make a file the repository holds, which
// only narrows, count as the person's own, which widens.
func UserSettingsFile(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
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
// UserSettingsFile), the project's and the store's, and merges them (see
// Merge): what a file inside the workspace widens applies only if the
// person trusted its content (the trust file, see TrustFile). A missing
// file is no settings. A file that names keys this program does not know
// is read for the rest, and the error wraps ErrUnknownSetting, naming the
// file and the keys: a command that only reads may warn and go on with
// what was read. Any other fault — a file that is not one JSON object, a
// value of the wrong type or out of range — is an error naming the file
// and the key; that file is left out. A trust file that cannot be read is
// an error too (wrapping ErrTrustFile), and nothing is trusted.
func (p Place) LoadLayered(getenv func(string) string) (Layered, error) {
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
	var trust Trust
	tf, err := p.trustFileOf(getenv)
	if err == nil {
		// A trust file inside the workspace is never read: a command
		// could have written it. Nothing is trusted then, and no rule
		// kept for the project applies.
		if trust, err = LoadTrust(tf); err != nil {
			errs = append(errs, err)
		}
	}
	root := resolved(p.Root)
	var srcs []SettingsSource
	for _, f := range files {
		if f.path == "" {
			continue
		}
		rel := f.rel
		if rel == "" {
			rel = filepath.Dir(f.path)
		}
		src := readSettings(f.scope, f.path, rel)
		// A file inside the workspace is trusted only as the person said,
		// by its content: the project's always, the store's when the store
		// is there, and the user's own too when the workspace holds it
		// (harness run in $HOME, or in a dotfiles repository), since a
		// command could have written it.
		src.Inside = f.scope == ScopeProject || inWorkspace(p.Root, f.path)
		src.Trusted = !src.Inside || (src.Exists && trust.Has(root, trustKey(f.path), src.Digest))
		if src.Err != nil {
			errs = append(errs, src.Err)
		}
		srcs = append(srcs, src)
		if f.scope == ScopeUser {
			// The person's rules for this workspace (always, for this
			// project), from the trust file outside it.
			if rules, ok := projectLayer(trust, root, tf); ok {
				srcs = append(srcs, rules)
			}
		}
	}
	return Merge(srcs...), errors.Join(errs...)
}

// SourceRecord is a layer of settings as a front end shows it (harness
// config -o json): the file, whether it is there and trusted, its keys set,
// applied, left out as untrusted and unknown, and its error.
type SourceRecord struct {
	Scope   Scope    `json:"scope"`
	Path    string   `json:"path"`
	Exists  bool     `json:"exists"`
	Digest  string   `json:"sha256,omitempty"`
	Inside  bool     `json:"inside_workspace,omitempty"`
	Trusted bool     `json:"trusted"`
	Set     []string `json:"set,omitempty"`
	Applied []string `json:"applied,omitempty"`
	Ignored []string `json:"ignored,omitempty"`
	Unknown []string `json:"unknown,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Files are the layers as a front end shows them, weakest first.
func (l Layered) Files() []SourceRecord {
	out := []SourceRecord{}
	for _, s := range l.Sources {
		f := SourceRecord{Scope: s.Scope, Path: s.Path, Exists: s.Exists, Digest: s.Digest, Inside: s.Inside, Trusted: s.Trusted,
			Set: s.Set, Applied: s.Applied, Ignored: s.Ignored, Unknown: s.Unknown}
		if s.Err != nil {
			f.Error = s.Err.Error()
		}
		out = append(out, f)
	}
	return out
}

// FlagSource is the command line as a layer of settings: s, of which the
// keys in set were given. It is trusted: a person typed it.
func FlagSource(s Settings, set ...string) SettingsSource {
	return SettingsSource{Scope: ScopeFlag, Trusted: true, Settings: s, Set: slices.Clone(set)}
}

// Merge lays the layers over each other, weakest first: the one place
// where settings combine, for files, flags and a thread's recorded policy
// alike. A value a stronger layer gives replaces a weaker one's; patterns
// (allow, deny) and MCP servers add up, so a deny anywhere applies. A
// layer that is not Trusted applies only the keys that narrow authority
// (see Widens); the keys it would widen are left out, and each such
// source's Ignored names them. A layer whose Err is other than
// ErrUnknownSetting is left out whole.
func Merge(layers ...SettingsSource) Layered {
	var l Layered
	for _, src := range layers {
		l = l.Over(src)
	}
	return l
}

// Over is l with one more layer over it, through the same merge as Merge;
// l is not changed.
func (l Layered) Over(src SettingsSource) Layered {
	out := Layered{Settings: l.Settings.clone(), Sources: slices.Clone(l.Sources), From: map[string][]Scope{}, recorded: l.recorded,
		Hooks: slices.Clone(l.Hooks)}
	for k, v := range l.From {
		out.From[k] = slices.Clone(v)
	}
	src.Widens, src.Applied, src.Ignored = nil, nil, nil
	if src.Err == nil || errors.Is(src.Err, ErrUnknownSetting) {
		out.merge(&src)
	}
	out.Sources = append(out.Sources, src)
	return out
}

// clone is s with its lists and maps its own.
func (s Settings) clone() Settings {
	s.Allow, s.Deny = slices.Clone(s.Allow), slices.Clone(s.Deny)
	s.NetworkAllow = slices.Clone(s.NetworkAllow)
	s.MCPServers = maps.Clone(s.MCPServers)
	s.Hooks = maps.Clone(s.Hooks)
	return s
}

// merge lays src over what l says, leaving out what src widens unless it
// is trusted, and notes on src what it widens, applied and left out.
func (l *Layered) merge(src *SettingsSource) {
	s, into := src.Settings, &l.Settings
	for _, key := range src.Set {
		if key == "seal_git_notes" && ((src.Scope != ScopeUser && src.Scope != ScopeFlag) || !src.Trusted) {
			// The person's seals, and their repository: no project or
			// store file says where they go.
			src.Ignored = append(src.Ignored, key)
			continue
		}
		if key == "prices" && (src.Scope != ScopeUser || !src.Trusted) {
			// Prices are the person's: no other file says what a turn
			// cost, however trusted (a repository would hide its spend);
			// nor the user's own file where the workspace holds it
			// (harness run in $HOME) until the person trusts it.
			src.Ignored = append(src.Ignored, key)
			continue
		}
		if Widens(key, *into, s) {
			src.Widens = append(src.Widens, key)
			if !src.Trusted {
				src.Ignored = append(src.Ignored, key)
				if key == "hooks" {
					l.Hooks = append(l.Hooks, hooksOf(src, false)...)
				}
				continue
			}
		}
		src.Applied = append(src.Applied, key)
		switch key {
		case "model":
			into.Model = s.Model
		case "approve":
			into.Approve = s.Approve
		case "allow":
			into.Allow = addNew(into.Allow, s.Allow)
		case "deny":
			into.Deny = addNew(into.Deny, s.Deny)
		case "max_turns":
			into.MaxTurns = s.MaxTurns
		case "max_steps":
			into.MaxSteps = s.MaxSteps
		case "context_window":
			into.ContextWindow = s.ContextWindow
		case "max_output_tokens":
			into.MaxOutputTokens = s.MaxOutputTokens
		case "instructions_max_bytes":
			into.InstructionsMaxBytes = s.InstructionsMaxBytes
		case "sandbox":
			into.Sandbox = s.Sandbox
		case "network":
			into.Network = s.Network
			if !slices.Contains(src.Set, "network_allow") {
				// Network on opens it whole, off closes it: either way a
				// weaker layer's list is no longer the rule.
				into.NetworkAllow = nil
			}
		case "network_allow":
			into.NetworkAllow = slices.Clone(s.NetworkAllow)
		case "serve":
			into.Serve = s.Serve
		case "prices":
			into.Prices = s.Prices
		case "seal_git_notes":
			into.SealGitNotes = s.SealGitNotes
		case "loop_guard":
			into.LoopGuard = s.LoopGuard
		case "worktrees":
			into.Worktrees = s.Worktrees
		case "worktree_merge":
			into.WorktreeMerge = s.WorktreeMerge
		case "max_cost":
			into.MaxCost = s.MaxCost
		case "max_tokens":
			into.MaxTokens = s.MaxTokens
		case "mcpServers":
			if into.MCPServers == nil {
				into.MCPServers = mcp.Servers{}
			}
			maps.Copy(into.MCPServers, s.MCPServers)
		case "hooks":
			l.Hooks = append(l.Hooks, hooksOf(src, true)...)
			if into.Hooks == nil {
				into.Hooks = HookSettings{}
			}
			for event, list := range s.Hooks {
				into.Hooks[event] = append(slices.Clone(into.Hooks[event]), list...)
			}
		}
		if key == "allow" || key == "deny" || key == "mcpServers" || key == "hooks" {
			l.From[key] = append(l.From[key], src.Scope)
		} else {
			l.From[key] = []Scope{src.Scope}
		}
	}
}

// addNew is list with each of more not in it already appended, in order.
func addNew(list, more []string) []string {
	for _, s := range more {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// Widens reports whether key, as s gives it, would widen authority over
// cur (what the weaker layers give, and the defaults where they give
// nothing). Narrowing — a deny pattern, a stricter sandbox, network off, a
// lower bound, a stricter approval mode — and giving what cur gives already
// do not widen. Everything else does: allow patterns not given already, a
// looser approval mode or sandbox, network on, any MCP server or serve
// setting not given already, any hook, another model (a provider's spends the
// person's key; a script decides every call), a raised bound or context window. A key
// this program does not classify widens.
func Widens(key string, cur, s Settings) bool {
	switch key {
	case "model":
		// Any other model widens, a script included: it decides every
		// call in the person's name (a repository's script can write what
		// "approve writes" lets through and say the tests pass).
		return s.Model != cur.Model
	case "approve":
		return approveRank(s.Approve) > approveRank(cur.Approve)
	case "allow":
		return slices.ContainsFunc(s.Allow, func(p string) bool { return !slices.Contains(cur.Allow, p) })
	case "deny":
		return false
	case "max_turns":
		return turnsBound(s.MaxTurns) > turnsBound(cur.MaxTurns)
	case "max_steps":
		return bound(s.MaxSteps, DefaultMaxSteps) > bound(cur.MaxSteps, DefaultMaxSteps)
	case "context_window":
		// A window not known (0) compacts by size alone; a window the
		// weaker layers do not give, or a larger one, widens.
		n, c := bound(s.ContextWindow, 0), bound(cur.ContextWindow, 0)
		return !(n == c || (c > 0 && n > 0 && n < c))
	case "max_output_tokens":
		// Like a context window: a bound the weaker layers do not give
		// (the provider's default may be lower), or a higher one, widens.
		n, c := bound64(s.MaxOutputTokens), bound64(cur.MaxOutputTokens)
		return !(n == c || (c > 0 && n > 0 && n < c))
	case "instructions_max_bytes":
		// A raised bound: more of the repository's text in every request
		// (the person's tokens).
		n, c := bound64(s.InstructionsMaxBytes), bound64(cur.InstructionsMaxBytes)
		if n == 0 {
			n = DefaultInstructionsMax
		}
		if c == 0 {
			c = DefaultInstructionsMax
		}
		return n > c
	case "sandbox":
		return sandboxRank(s.Sandbox) < sandboxRank(cur.Sandbox)
	case "network":
		return s.Network && NetworkRuleOf(cur).Kind != NetworkOn
	case "network_allow":
		next := cur
		next.NetworkAllow = s.NetworkAllow
		return !NetworkRuleOf(next).Within(NetworkRuleOf(cur))
	case "mcpServers":
		for name, srv := range s.MCPServers {
			if have, ok := cur.MCPServers[name]; !ok || !reflect.DeepEqual(have, srv) {
				return true
			}
		}
		return false
	case "serve":
		return s.Serve != nil && !reflect.DeepEqual(s.Serve, cur.Serve)
	case "hooks":
		// A hook runs code: any hook widens.
		return len(s.Hooks) > 0
	case "prices":
		return false // no authority; only the user's file sets them (merge)
	case "seal_git_notes":
		return false // no authority; only the user's file or a flag sets it (merge)
	case "max_cost":
		// No budget (0), or a larger one, widens; a first one narrows.
		n, c := costOf(s.MaxCost), costOf(cur.MaxCost)
		return !(n == c || (n > 0 && (c == 0 || n < c)))
	case "max_tokens":
		n, c := bound64(s.MaxTokens), bound64(cur.MaxTokens)
		return !(n == c || (n > 0 && (c == 0 || n < c)))
	case "loop_guard":
		// A guard off (0), or one that lets more repeats through, widens.
		n, c := bound(s.LoopGuard, DefaultLoopGuard), bound(cur.LoopGuard, DefaultLoopGuard)
		return !(n == c || (c > 0 && n > 0 && n < c))
	case "worktrees":
		// Children sharing the workspace where they would have had their
		// own worktree widens what each can touch.
		return worktreesRank(s.Worktrees) < worktreesRank(cur.Worktrees)
	case "worktree_merge":
		// Offering a merge where a layer said to leave the branch widens:
		// an offered merge may write the workspace.
		return s.WorktreeMerge != facts.WorktreeMergeBranch && cur.WorktreeMerge == facts.WorktreeMergeBranch
	}
	return true
}

// worktreesRank orders the worktree modes by how apart they keep
// children: off, parallel (the default), always.
func worktreesRank(mode string) int {
	switch mode {
	case facts.WorktreesOff:
		return 0
	case facts.WorktreesAlways:
		return 2
	}
	return 1
}

func bound(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func bound64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// turnsBound is a max_turns as a number to compare: 0 is no bound.
func turnsBound(p *int) int {
	n := bound(p, DefaultMaxTurns)
	if n == 0 {
		return int(^uint(0) >> 1)
	}
	return n
}

func approveRank(mode string) int {
	switch mode {
	case "writes":
		return 1
	case "all":
		return 2
	}
	return 0
}

// sandboxRank orders the sandbox modes by strictness: off, workspace-write
// (the default), read-only.
func sandboxRank(mode string) int {
	switch mode {
	case string(sandbox.Off):
		return 0
	case string(sandbox.ReadOnly):
		return 2
	}
	return 1
}

// Trustable are the layers trust applies to: the files inside the
// workspace that exist, weakest first.
func (l Layered) Trustable() []SettingsSource {
	var out []SettingsSource
	for _, s := range l.Sources {
		if s.Inside && s.Exists {
			out = append(out, s)
		}
	}
	return out
}

// Untrusted are the layers that left keys out, not being trusted.
func (l Layered) Untrusted() []SettingsSource {
	var out []SettingsSource
	for _, s := range l.Sources {
		if len(s.Ignored) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// Notice is the one line that says what untrusted files widen and was
// left out, and how to trust them; "" when nothing was.
func (l Layered) Notice() string {
	var parts []string
	for _, s := range l.Untrusted() {
		parts = append(parts, fmt.Sprintf("%s (%s)", s.Path, strings.Join(s.Ignored, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "ignoring what untrusted settings would widen: " + strings.Join(parts, "; ") + "; to review and trust them: harness trust"
}

// Record is the layers as a thread records them (system.configured):
// each layer that set something, with its file's path and digest, the
// keys applied and the keys left out.
func (l Layered) Record() []facts.SettingsSource {
	var out []facts.SettingsSource
	for _, s := range l.Sources {
		if len(s.Applied) == 0 && len(s.Ignored) == 0 {
			continue
		}
		out = append(out, facts.SettingsSource{Scope: string(s.Scope), Path: s.Path, Digest: s.Digest, Trusted: s.Trusted && s.Path != "",
			Keys: slices.Clone(s.Applied), Ignored: slices.Clone(s.Ignored)})
	}
	return out
}

// Policy is the approval policy the layers give, as a policy.set payload
// set by by: each rule with its source, and the files whose approval rules
// were left out as untrusted. A mode or pattern that does not parse is the
// error.
func (l Layered) Policy(by string) (facts.PolicySet, error) {
	a, err := drive.NewApproval(l.Settings.Approve, l.Settings.Allow, l.Settings.Deny)
	if err != nil {
		return facts.PolicySet{}, err
	}
	p := a.Policy(by)
	// Each rule's source: the layer that set it (the last one for the
	// mode, the first one that added it for a pattern).
	from := map[string]facts.RuleSource{}
	note := func(rule string, s SettingsSource, last bool) {
		if _, ok := from[rule]; ok && !last {
			return
		}
		rs := facts.RuleSource{Rule: rule, Scope: string(s.Scope), Path: s.Path, Digest: s.Digest}
		if s.Scope == ScopeThread {
			rs = facts.RuleSource{Rule: rule, Scope: string(ScopeThread)}
			for _, r := range l.recorded {
				if r.Rule == rule {
					rs = r
				}
			}
		}
		from[rule] = rs
	}
	for _, s := range l.Sources {
		for _, key := range s.Applied {
			switch key {
			case "approve":
				if s.Settings.Approve != "" && s.Settings.Approve != string(drive.ApproveAsk) {
					note("approve:"+s.Settings.Approve, s, true)
				}
			case "allow":
				for _, x := range s.Settings.Allow {
					note("allow:"+patternString(x), s, false)
				}
			case "deny":
				for _, x := range s.Settings.Deny {
					note("deny:"+patternString(x), s, false)
				}
			}
		}
		if ig := policyKeys(s.Ignored); len(ig) > 0 {
			p.Ignored = append(p.Ignored, facts.SettingsSource{Scope: string(s.Scope), Path: s.Path, Digest: s.Digest, Ignored: ig})
		}
	}
	if p.Approve != "" {
		if rs, ok := from["approve:"+p.Approve]; ok {
			p.Sources = append(p.Sources, rs)
		}
	}
	for _, x := range p.Allow {
		if rs, ok := from["allow:"+x]; ok {
			p.Sources = append(p.Sources, rs)
		}
	}
	for _, x := range p.Deny {
		if rs, ok := from["deny:"+x]; ok {
			p.Sources = append(p.Sources, rs)
		}
	}
	return p, nil
}

// policyKeys are the keys of an approval policy among keys.
func policyKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		if k == "approve" || k == "allow" || k == "deny" {
			out = append(out, k)
		}
	}
	return out
}

// patternString is a pattern as a policy records it.
func patternString(s string) string {
	if p, err := drive.ParsePattern(s); err == nil {
		return p.String()
	}
	return s
}

// Amend is the recorded policy p with a layer a person adds (the command
// line's flags, or an answer's "always" pattern), through the one merge: a
// mode replaces p's, patterns are added to p's (each once, in order); each
// rule keeps its source, a new one gets the layer's. by is who sets the
// result. A mode or pattern that does not parse is the error.
func Amend(p facts.PolicySet, layer SettingsSource, by string) (facts.PolicySet, error) {
	rec := SettingsSource{Scope: ScopeThread, Trusted: true, Settings: Settings{Approve: p.Approve, Allow: p.Allow, Deny: p.Deny}}
	for key, set := range map[string]bool{"approve": p.Approve != "", "allow": len(p.Allow) > 0, "deny": len(p.Deny) > 0} {
		if set {
			rec.Set = append(rec.Set, key)
		}
	}
	slices.Sort(rec.Set) // map order is no order
	l := Layered{recorded: p.Sources}.Over(rec)
	// Only the policy's keys of the layer are the policy's.
	layer.Set = policyKeys(layer.Set)
	out, err := l.Over(layer).Policy(by)
	if err != nil {
		return out, err
	}
	out.Ignored = p.Ignored
	return out, nil
}

// Amender is Amend of each policy with layer, by who set the policy, as
// drive.Options.AmendPolicy wants it: a worker's flags over each thread's
// own policy. A policy whose own rules do not parse is returned as it is
// (drive refuses it for the same reason); check layer's rules first (Amend
// of an empty policy) for the error to be the layer's.
func Amender(layer SettingsSource) func(facts.PolicySet) facts.PolicySet {
	return func(p facts.PolicySet) facts.PolicySet {
		out, err := Amend(p, layer, p.By)
		if err != nil {
			return p
		}
		return out
	}
}

// AnswerSource is a person's "always" at a prompt as a layer: the allow
// pattern they approved for the rest of the thread.
func AnswerSource(allow string) SettingsSource {
	return SettingsSource{Scope: ScopeAnswer, Trusted: true, Settings: Settings{Allow: []string{allow}}, Set: []string{"allow"}}
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
	b, err := readBounded(path, MaxSettingsSize)
	if errors.Is(err, fs.ErrNotExist) {
		return src
	}
	src.Exists = true
	if err != nil {
		src.Err = fmt.Errorf("read settings %s: %w", path, err)
		return src
	}
	src.Digest = digestOf(b)
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
	src.Values = map[string]json.RawMessage{}
	for _, key := range known {
		if v, ok := raw[key]; ok {
			src.Set = append(src.Set, key)
			src.Values[key] = v
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

// MaxSettingsSize is the largest settings file read.
const MaxSettingsSize = 1 << 20

// readBounded reads the regular file at path, at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		kind := "special file"
		switch m := fi.Mode(); {
		case m.IsDir():
			kind = "directory"
		case m&fs.ModeDevice != 0:
			kind = "device"
		case m&fs.ModeNamedPipe != 0:
			kind = "named pipe"
		case m&fs.ModeSocket != 0:
			kind = "socket"
		}
		return nil, fmt.Errorf("%w: %s is a %s, not a regular file", ErrSettingsFile, path, kind)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrSettingsFile, path, max)
	}
	return b, nil
}

// check refuses values that cannot work.
func (s Settings) check() error {
	if err := s.Serve.validate(); err != nil {
		return err
	}
	if err := s.Hooks.validate(); err != nil {
		return err
	}
	if err := s.MCPServers.Validate(); err != nil {
		return fmt.Errorf("mcpServers: %w", err)
	}
	for _, c := range keyChecks {
		if err := c.check(s, c.key); err != nil {
			return err
		}
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
