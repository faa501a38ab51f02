package tell

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// Settings are the settings in force in a workspace, as the command line
// shows them: the layered files, the instruction files read, the agents
// defined in files.
type Settings struct {
	Layered      stock.Layered
	Instructions []facts.InstructionFile
	Agents       []stock.AgentEntry
	// UserInstructions is the user's own instruction file's path ("" when
	// there is none to name).
	UserInstructions string
	// RulesElsewhere counts the project rules kept for this workspace's
	// path that were given for another directory there (removed and made
	// again, or another clone), kept in RulesFile: they do not apply.
	RulesElsewhere int
	RulesFile      string
}

// SettingsDoc is the JSON document of the settings in force.
type SettingsDoc struct {
	Settings     stock.Settings           `json:"settings"`
	From         map[string][]stock.Scope `json:"from"`
	Files        []stock.SourceRecord     `json:"files"`
	Instructions []facts.InstructionFile  `json:"instructions"`
	Hooks        []stock.HookView         `json:"hooks"`
	Agents       []stock.AgentEntry       `json:"agents"`
	Network      stock.NetworkView        `json:"network"`
}

// Doc is the settings' JSON document.
func (c Settings) Doc() SettingsDoc {
	l := c.Layered
	return SettingsDoc{l.Settings, l.From, l.Files(), c.Instructions, l.HookViews(), c.Agents, l.NetworkView()}
}

// errorLine is an error on one line, escaped.
func errorLine(err error) string { return present.EscapeLine(err.Error()) }

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Config tells the settings in force: each file and what it sets (or
// why it is ignored), each key with its value and the scopes that set
// it, the network rule, the instruction files, the agents and the hooks.
// What the files say is escaped.
func Config(w io.Writer, c Settings) error {
	l := c.Layered
	fmt.Fprintln(w, "files, weakest first:")
	for _, s := range l.Sources {
		state := "not there"
		switch {
		case s.Err != nil:
			state = "error: " + errorLine(s.Err)
		case s.Exists && len(s.Set) == 0:
			state = "sets nothing"
		case s.Exists && len(s.Ignored) > 0:
			state = "sets " + Dash(strings.Join(s.Applied, ", ")) + "; ignored, not trusted: " + strings.Join(s.Ignored, ", ")
		case s.Exists && s.Inside && s.Trusted && len(s.Widens) > 0:
			state = "sets " + strings.Join(s.Set, ", ") + " (trusted)"
		case s.Exists:
			state = "sets " + strings.Join(s.Set, ", ")
		}
		fmt.Fprintf(w, "  %-9s %s: %s\n", s.Scope, present.EscapeLine(s.Path), state)
	}
	if c.RulesElsewhere > 0 {
		were, they := "were", "they do"
		if c.RulesElsewhere == 1 {
			were, they = "was", "it does"
		}
		fmt.Fprintf(w, "  %-9s %s: %s kept for this path %s given for another directory there (removed and made again, or another clone): %s not apply here\n",
			stock.ScopeWorkspace, present.EscapeLine(c.RulesFile), present.Plural(c.RulesElsewhere, "rule", "rules"), were, they)
	}
	fmt.Fprintln(w, "settings:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	st := l.Settings
	turns, steps := fmt.Sprint(stock.DefaultMaxTurns), fmt.Sprint(stock.DefaultMaxSteps)
	if st.MaxTurns != nil {
		turns = fmt.Sprint(*st.MaxTurns)
	}
	if st.MaxSteps != nil {
		steps = fmt.Sprint(*st.MaxSteps)
	}
	insMax := fmt.Sprint(stock.DefaultInstructionsMax)
	if st.InstructionsMaxBytes != nil {
		insMax = fmt.Sprint(*st.InstructionsMaxBytes)
	}
	window := "not known"
	if st.ContextWindow != nil && *st.ContextWindow > 0 {
		window = fmt.Sprint(*st.ContextWindow)
	}
	for _, kv := range []struct{ key, value string }{
		{"model", st.Model}, {"approve", orDefault(st.Approve, "ask")},
		{"allow", strings.Join(st.Allow, ", ")}, {"deny", strings.Join(st.Deny, ", ")},
		{"max_turns", turns}, {"max_steps", steps}, {"context_window", window},
		{"sandbox", orDefault(st.Sandbox, "workspace-write")}, {"network", fmt.Sprint(st.Network)}, {"network_allow", strings.Join(st.NetworkAllow, ", ")},
		{"instructions_max_bytes", insMax}, {"worktrees", orDefault(st.Worktrees, facts.WorktreesParallel)}, {"worktree_merge", orDefault(st.WorktreeMerge, facts.WorktreeMergeAsk)},
	} {
		from := "default"
		if scopes, ok := l.From[kv.key]; ok {
			names := make([]string, len(scopes))
			for i, s := range scopes {
				names[i] = string(s)
			}
			from = strings.Join(names, " + ")
		}
		for _, src := range l.Sources {
			if slices.Contains(src.Ignored, kv.key) {
				from += "; " + string(src.Scope) + "'s ignored: not trusted"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", kv.key, Dash(present.EscapeLine(kv.value)), from)
	}
	for _, key := range []string{"mcpServers", "serve"} {
		for _, src := range l.Sources {
			if slices.Contains(src.Ignored, key) {
				fmt.Fprintf(tw, "  %s\t%s\t(%s's ignored: not trusted)\n", key, "-", src.Scope)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	Network(w, l.NetworkView())
	fmt.Fprintln(w, "instructions (given to the model before each turn, as the project's text; a thread adds the AGENTS.md on the way to the paths it touches):")
	if len(c.Instructions) == 0 {
		fmt.Fprintf(w, "  none: no %s at the workspace root, nor the user's (%s)\n", stock.InstructionsName, present.EscapeLine(Dash(c.UserInstructions)))
	}
	for _, f := range c.Instructions {
		if f.Skipped != "" {
			fmt.Fprintf(w, "  %-8s %s: left out — %s\n", f.Scope, present.EscapeLine(f.Path), present.EscapeLine(f.Skipped))
			continue
		}
		fmt.Fprintf(w, "  %-8s %s: %d bytes, sha256 %s\n", f.Scope, present.EscapeLine(f.Path), f.Size, ShortDigest(f.Digest))
	}
	if len(c.Agents) > 0 {
		fmt.Fprintln(w, "agents (a delegation may name one; harness agents says more):")
		for _, ag := range c.Agents {
			if ag.Err != nil {
				fmt.Fprintf(w, "  %s: cannot be used — %s\n", ag.Name, errorLine(ag.Err))
				continue
			}
			fmt.Fprintf(w, "  %-8s %s: sha256 %.12s%s\n", ag.Agent.Scope, present.EscapeLine(ag.Agent.Path), ag.Agent.Digest, present.EscapeLine(AgentModel(ag.Agent)))
		}
	}
	hooks := l.HookViews()
	if len(hooks) == 0 {
		return nil
	}
	fmt.Fprintln(w, "hooks, in the order they run:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, h := range hooks {
		state := "trusted"
		if !h.Trusted {
			state = "not trusted: does not run (harness trust)"
		}
		more := fmt.Sprintf("timeout %gs, %s", h.Timeout, h.Sandbox)
		if h.Matcher != "" {
			more = "tools " + h.Matcher + ", " + more
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t(%s)\n", h.Event, present.EscapeLine(h.Name), h.Scope, state,
			present.EscapeLine(h.Command), present.EscapeLine(more))
	}
	return tw.Flush()
}

// Network says the network rule in force and where each allowed host
// comes from.
func Network(w io.Writer, v stock.NetworkView) {
	switch v.Rule {
	case stock.NetworkOn:
		fmt.Fprintln(w, "network: on (commands use the network as you can)")
	case stock.NetworkOff:
		fmt.Fprintln(w, "network: off (commands have only their own loopback)")
	default:
		fmt.Fprintf(w, "network: %s (an allow-list: commands reach only these hosts, through the harness's proxy; each connection recorded):\n", present.EscapeLine(v.Spelling))
	}
	for _, a := range v.Allow {
		fmt.Fprintf(w, "  %s\t(%s%s)\n", present.EscapeLine(a.Host), a.Scope, pathOf(a.Path))
	}
	for _, a := range v.Ignored {
		fmt.Fprintf(w, "  %s\tignored: not trusted (%s%s)\n", present.EscapeLine(a.Host), a.Scope, pathOf(a.Path))
	}
}

// pathOf is " PATH" escaped, or "" for none.
func pathOf(p string) string {
	if p == "" {
		return ""
	}
	return " " + present.EscapeLine(p)
}

// Agents tells the agents defined in files as a table: name, scope,
// tools, turns, digest, description and model, or why one cannot be
// used. user is the user's agents directory, named when there are none.
func Agents(w io.Writer, agents []stock.AgentEntry, user string) error {
	if len(agents) == 0 {
		_, err := fmt.Fprintln(w, "no agents: none in .harness/agents, nor yours ("+present.EscapeLine(Dash(user))+")")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tTOOLS\tTURNS\tDIGEST\tDESCRIPTION")
	for _, e := range agents {
		if e.Err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\terror: %s\n", e.Name, errorLine(e.Err))
			continue
		}
		j := e.Agent
		tools := "(the parent's)"
		if j.Tools != nil {
			tools = Dash(strings.Join(j.Tools, ","))
		}
		turns := "-"
		if j.MaxTurns > 0 {
			turns = fmt.Sprint(j.MaxTurns)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%s\n", e.Name, j.Scope, present.EscapeLine(tools), turns, ShortDigest(j.Digest),
			present.EscapeLine(Dash(j.Description)), present.EscapeLine(AgentModel(j)))
	}
	return tw.Flush()
}

// AgentModel says which model an agent's child runs on, when its file
// names one, and whether the file may choose it.
func AgentModel(ag harness.Agent) string {
	switch {
	case ag.Model == "":
		return ""
	case ag.ModelTrusted:
		return " · model " + ag.Model
	}
	return " · model " + ag.Model + " (not trusted: used only where it is the parent's model; harness trust " + ag.Path + ")"
}
