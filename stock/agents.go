package stock

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
)

// AgentsDir is where agent files are, under the workspace's .harness and
// beside the user's settings: NAME.md, one agent each.
const AgentsDir = "agents"

// Agent scopes: where an agent file was read.
const (
	AgentsProject = "project"
	AgentsUser    = "user"
)

// Agents reads agent files for the runtime (a harness.AgentReader): the
// workspace's .harness/agents/NAME.md, then the user's
// $XDG_CONFIG_HOME/harness/agents/NAME.md; a project file of a name hides
// the user's. A file is a front matter of "key: value" lines between two
// "---" lines — description, tools (a list), max_turns — and a body, the
// child's instructions. What a file declares only narrows: a child of an
// agent has at most the agent's tools and turns, and at most its
// parent's. "sandbox: read-only" holds the child to plan mode's tools
// (those that read; commands with the workspace read-only; no delegate);
// "sandbox: workspace-write" is the parent's, and any other value is
// refused. "model: SPEC" (see ParseModelSpec; a script's path relative to
// the workspace root for a project file, to the user's agents directory
// for the user's) has the child run on that model: the user's own file
// may choose one, a file inside the workspace only once the person trusted
// its content (harness trust; see Agent.ModelTrusted) — until then a
// delegation to it is refused unless the model is its parent's.
// Files are bounded (Max), and a project file that leads out of the
// workspace or into a hidden place is not read (the rules of
// Instructions).
type Agents struct {
	// Root is the workspace root.
	Root string
	// User is the user's agents directory, "" for none.
	User string
	// Max bounds each file, in bytes; 0 is DefaultInstructionsMax.
	Max int64
	// Hidden are the paths the tools' sandbox hides (see
	// Instructions.Hidden).
	Hidden []string
	// Trusted reports whether the person trusted the content of digest
	// of the file at path (harness trust), for a file inside the
	// workspace that names a model; nil trusts none.
	Trusted func(path, digest string) bool
}

// AgentsOf is the agent reader beside the instruction reader in: the
// same workspace, bound and hidden places, and the user's agents
// directory beside the user's instruction file.
func AgentsOf(in Instructions) Agents {
	a := Agents{Root: in.Root, Max: in.Max, Hidden: in.Hidden}
	if in.User != "" {
		a.User = filepath.Join(filepath.Dir(in.User), AgentsDir)
	}
	return a
}

func (a Agents) max() int64 {
	if a.Max > 0 {
		return a.Max
	}
	return DefaultInstructionsMax
}

// projectDir is the project's agents directory, slash-separated from the
// root.
var projectDir = path.Join(StoreDir, AgentsDir)

// ReadAgent reads the agent name: the project's file, else the user's;
// neither is harness.ErrUnknownAgent.
func (a Agents) ReadAgent(ctx context.Context, name string) (harness.Agent, error) {
	if !facts.ValidAgentName(name) {
		return harness.Agent{}, fmt.Errorf("agent %q: %w", name, ErrAgentName)
	}
	if err := ctx.Err(); err != nil {
		return harness.Agent{}, err
	}
	if a.Root != "" {
		root, err := filepath.EvalSymlinks(a.Root)
		if err != nil {
			return harness.Agent{}, fmt.Errorf("the workspace %s: %w", a.Root, err)
		}
		rel := path.Join(projectDir, name+".md")
		real, why, ok := projectFile(a.Root, root, rel, a.Hidden, projectDir)
		switch {
		case ok && why != "":
			return harness.Agent{}, fmt.Errorf("%s: %s: %w", rel, why, ErrAgentFile)
		case ok:
			return a.read(name, AgentsProject, rel, real, filepath.Join(a.Root, filepath.FromSlash(rel)), a.Root)
		}
	}
	if a.User != "" {
		p := filepath.Join(a.User, name+".md")
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return a.read(name, AgentsUser, p, real, p, a.User)
		}
	}
	return harness.Agent{}, fmt.Errorf("agent %q: %w", name, harness.ErrUnknownAgent)
}

// read reads and parses the file real resolves to; abs is where it is
// named, and dir what the path of a script it names is relative to.
func (a Agents) read(name, scope, where, real, abs, dir string) (harness.Agent, error) {
	text, _, why, ok := readInstructionFile(real, a.max())
	if !ok {
		return harness.Agent{}, fmt.Errorf("agent %q: %w", name, harness.ErrUnknownAgent)
	}
	if why != "" {
		return harness.Agent{}, fmt.Errorf("%s: %s: %w", where, strings.Replace(why, "instructions_max_bytes", "agent files", 1), ErrAgentFile)
	}
	ag, err := ParseAgent(text)
	if err != nil {
		return harness.Agent{}, fmt.Errorf("%s: %w", where, err)
	}
	ag.Name, ag.Scope, ag.Path, ag.Digest = name, scope, where, facts.ContentDigest(text)
	if ag.Model != "" {
		if ag.Model, err = ParseModelSpec(ag.Model, dir); err != nil {
			return harness.Agent{}, fmt.Errorf("%s: model: %w: %w", where, err, ErrAgentFile)
		}
		// The user's own file chooses; one anyone who could write the
		// workspace may have written, only as the person trusted it.
		inside := scope == AgentsProject || (a.Root != "" && inWorkspace(a.Root, abs))
		ag.ModelTrusted = !inside || (a.Trusted != nil && a.Trusted(abs, ag.Digest))
	}
	return ag, nil
}

// AgentNames are the names of the agents of both scopes, sorted, each
// once.
func (a Agents) AgentNames(context.Context) ([]string, error) {
	var names, dirs []string
	if a.Root != "" {
		dirs = append(dirs, filepath.Join(a.Root, filepath.FromSlash(projectDir)))
	}
	if a.User != "" {
		dirs = append(dirs, a.User)
	}
	for _, dir := range dirs {
		es, err := os.ReadDir(dir)
		if err != nil {
			continue // none there
		}
		for _, e := range es {
			n, ok := strings.CutSuffix(e.Name(), ".md")
			if ok && facts.ValidAgentName(n) && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// AgentEntry is an agent as `harness agents` lists it: the agent, or why
// its file cannot be used.
type AgentEntry struct {
	Name  string
	Agent harness.Agent
	Err   error
}

// MarshalJSON writes the entry as every front end lists an agent: its
// name, scope, path, description, tools (null: the parent's), turns at
// most, digest and sandbox (read-only), or the error (escaped) that keeps it from use.
func (e AgentEntry) MarshalJSON() ([]byte, error) {
	j := struct {
		Name        string   `json:"name"`
		Scope       string   `json:"scope,omitempty"`
		Path        string   `json:"path,omitempty"`
		Description string   `json:"description,omitempty"`
		Tools       []string `json:"tools"`
		MaxTurns    int      `json:"max_turns,omitempty"`
		Digest      string   `json:"digest,omitempty"`
		Sandbox     string   `json:"sandbox,omitempty"`
		Model       string   `json:"model,omitempty"`
		Trusted     *bool    `json:"model_trusted,omitempty"`
		Error       string   `json:"error,omitempty"`
	}{Name: e.Name, Scope: e.Agent.Scope, Path: e.Agent.Path, Description: e.Agent.Description,
		Tools: e.Agent.Tools, MaxTurns: e.Agent.MaxTurns, Digest: e.Agent.Digest, Sandbox: e.Agent.Sandbox, Model: e.Agent.Model}
	if e.Agent.Model != "" {
		j.Trusted = &e.Agent.ModelTrusted
	}
	if e.Err != nil {
		j.Error = present.EscapeLine(e.Err.Error())
	}
	return json.Marshal(j)
}

// ListAgents reads the agents of the place p under the settings s, as the
// runtime would (see Agents.List), the user's configuration directory
// hidden from their files as from every turn's; user is the user's
// agents directory ("" for none).
func ListAgents(ctx context.Context, p Place, s Settings, getenv func(string) string) (list []AgentEntry, user string, err error) {
	in := InstructionsOf(p, s, getenv)
	if u := UserSettingsFile(getenv); u != "" {
		in.Hidden = append(in.Hidden, filepath.Dir(u))
	}
	r := AgentsOf(in)
	r.Trusted = p.TrustedContent(getenv)
	list, err = r.List(ctx)
	return list, r.User, err
}

// List reads every agent there is (see AgentNames), each as ReadAgent
// would.
func (a Agents) List(ctx context.Context) ([]AgentEntry, error) {
	names, err := a.AgentNames(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]AgentEntry, 0, len(names))
	for _, n := range names {
		ag, err := a.ReadAgent(ctx, n)
		out = append(out, AgentEntry{Name: n, Agent: ag, Err: err})
	}
	return out, nil
}

// ParseAgent parses an agent file: a front matter between "---" lines of
// "key: value" lines (description, tools, max_turns), then the body. It
// is parsed here rather than as YAML: the front matter is a few flat
// keys, and a subset this small has no anchors, aliases, types or
// multi-line forms to surprise anyone reading a hostile file. tools is a
// list, "[a, b]" or "a, b"; an empty list gives no tools.
func ParseAgent(text []byte) (harness.Agent, error) {
	var ag harness.Agent
	s := strings.ReplaceAll(string(text), "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return ag, fmt.Errorf("no front matter: an agent file starts with a line \"---\": %w", ErrAgentFile)
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		if h, found := strings.CutSuffix(rest, "\n---"); found {
			head, body, ok = h, "", true
		}
	}
	if !ok {
		return ag, fmt.Errorf("the front matter has no closing line \"---\": %w", ErrAgentFile)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(head))
	for n := 2; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		key, val = strings.TrimSpace(key), unquote(strings.TrimSpace(val))
		if !ok || key == "" {
			return ag, fmt.Errorf("line %d: want key: value: %w", n, ErrAgentFile)
		}
		if seen[key] {
			return ag, fmt.Errorf("line %d: %s is set twice: %w", n, key, ErrAgentFile)
		}
		seen[key] = true
		switch key {
		case "name":
			// The file's name is the agent's; a name here is a label.
		case "description":
			ag.Description = val
		case "tools":
			ag.Tools = []string{}
			for t := range strings.SplitSeq(strings.TrimSuffix(strings.TrimPrefix(val, "["), "]"), ",") {
				if t = unquote(strings.TrimSpace(t)); t != "" {
					ag.Tools = append(ag.Tools, t)
				}
			}
		case "max_turns":
			v, err := strconv.Atoi(val)
			if err != nil || v < 1 {
				return ag, fmt.Errorf("line %d: max_turns is a number ≥ 1, not %q: %w", n, val, ErrAgentFile)
			}
			ag.MaxTurns = v
		case "sandbox":
			// Only narrowing: read-only, or the parent's as it is.
			switch val {
			case facts.SandboxReadOnly:
				ag.Sandbox = facts.SandboxReadOnly
			case facts.SandboxWorkspaceWrite:
				// The parent's sandbox, no wider: nothing to narrow.
			default:
				return ag, fmt.Errorf("line %d: sandbox is %q or %q, not %q (a child never runs wider than its parent): %w",
					n, facts.SandboxReadOnly, facts.SandboxWorkspaceWrite, val, ErrAgentFile)
			}
		case "model":
			// Checked against the spec's forms by the reader, which
			// knows what a script's path is relative to.
			if val == "" {
				return ag, fmt.Errorf("line %d: model is a model spec (openai:MODEL, anthropic:MODEL, scripted:FILE), not empty: %w", n, ErrAgentFile)
			}
			ag.Model = val
		default:
			return ag, fmt.Errorf("line %d: unknown key %q (want description, tools, max_turns, sandbox, model): %w", n, key, ErrAgentFile)
		}
	}
	ag.Instructions = strings.TrimSpace(body)
	return ag, nil
}

// unquote takes one pair of matching quotes off s.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// TrustedContent reports, for a file inside the workspace, whether the
// person trusted the content of digest of the file at path (harness
// trust), reading the trust file anew each time (a trust given meanwhile
// counts). No trust file, or one inside the workspace, trusts nothing.
func (p Place) TrustedContent(getenv func(string) string) func(path, digest string) bool {
	return func(path, digest string) bool {
		tf, err := p.trustFileOf(getenv)
		if err != nil {
			return false
		}
		t, err := LoadTrust(tf)
		return err == nil && t.Has(resolved(p.Root), trustKey(path), digest)
	}
}

// AgentTrustSources are the project's agent files that name a model, as
// harness trust lists the files it may trust: each one's path, digest,
// whether trusted, and "model" as what it widens, with its value. A file
// that cannot be read or used is left out (harness agents says why).
func AgentTrustSources(ctx context.Context, p Place, s Settings, getenv func(string) string) []SettingsSource {
	list, _, err := ListAgents(ctx, p, s, getenv)
	if err != nil {
		return nil
	}
	var out []SettingsSource
	for _, e := range list {
		ag := e.Agent
		if e.Err != nil || ag.Scope != AgentsProject || ag.Model == "" {
			continue
		}
		v, _ := json.Marshal(ag.Model)
		out = append(out, SettingsSource{Scope: ScopeProject, Path: filepath.Join(p.Root, filepath.FromSlash(ag.Path)), Exists: true,
			Digest: ag.Digest, Inside: true, Trusted: ag.ModelTrusted, Set: []string{"model"}, Widens: []string{"model"},
			Values: map[string]json.RawMessage{"model": v}})
	}
	return out
}
