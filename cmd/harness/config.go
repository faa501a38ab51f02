package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the settings in force here and which file set each: the user's, the project's, the store's",
		Long: `Show the settings the commands run with here, each with the file that set it.
Three files are read, weakest first:

  user     $XDG_CONFIG_HOME/harness/config.json (~/.config/harness/config.json)
  project  <workspace>/.harness/project.json — commit it: everyone's defaults
  local    <store>/config.json — this checkout's own

A value from a stronger file replaces a weaker one's; allow and deny patterns
add up. Flags on a command line are stronger still. Keys: ` + strings.Join(stock.SettingKeys(), ", ") + `.
An unknown key is named (a command that only reads goes on; one that runs a
thread stops, so that a mistyped "deny" never goes unnoticed). Each key says
the scope that set it; a key a file inside the workspace would widen, left out
because you have not trusted that file's content, is shown as ignored (see
harness trust).

It also lists the instruction files in force here (AGENTS.md: yours beside
your settings, the workspace root's), each with its size and digest, or why
it is left out; a thread adds those on the way to the paths its calls name;
and the agents defined in files (see harness agents).

` + trustHelp,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			p, err := a.place()
			if err != nil {
				return err
			}
			l, lerr := p.LoadLayered(a.getenv)
			read, ierr := stock.InstructionsOf(p, l.Settings, a.getenv).ReadInstructions(cmd.Context(), nil)
			if ierr != nil {
				return ierr
			}
			agents, _, aerr := stock.ListAgents(cmd.Context(), p, l.Settings, a.getenv)
			if aerr != nil {
				return aerr
			}
			ins := make([]facts.InstructionFile, len(read))
			for i, r := range read {
				ins[i] = r.File
			}
			if a.jsonOut() {
				out := struct {
					Settings     stock.Settings           `json:"settings"`
					From         map[string][]stock.Scope `json:"from"`
					Files        []stock.SourceRecord     `json:"files"`
					Instructions []facts.InstructionFile  `json:"instructions"`
					Hooks        []stock.HookView         `json:"hooks"`
					Agents       []stock.AgentEntry       `json:"agents"`
					Network      stock.NetworkView        `json:"network"`
				}{l.Settings, l.From, l.Files(), ins, l.HookViews(), agents, l.NetworkView()}
				return a.printJSON(out)
			}
			w := a.stdout
			fmt.Fprintln(w, "files, weakest first:")
			for _, s := range l.Sources {
				state := "not there"
				switch {
				case s.Err != nil:
					state = "error: " + personError(s.Err)
				case s.Exists && len(s.Set) == 0:
					state = "sets nothing"
				case s.Exists && len(s.Ignored) > 0:
					state = "sets " + dash(strings.Join(s.Applied, ", ")) + "; ignored, not trusted: " + strings.Join(s.Ignored, ", ")
				case s.Exists && s.Inside && s.Trusted && len(s.Widens) > 0:
					state = "sets " + strings.Join(s.Set, ", ") + " (trusted)"
				case s.Exists:
					state = "sets " + strings.Join(s.Set, ", ")
				}
				fmt.Fprintf(w, "  %-9s %s: %s\n", s.Scope, present.EscapeLine(s.Path), state)
			}
			if gone, file := p.ProjectRulesElsewhere(a.getenv); len(gone) > 0 {
				fmt.Fprintf(w, "  %-9s %s: %d rule(s) kept for this path were given for another directory there (removed and made again, or another clone): they do not apply here\n", stock.ScopeWorkspace, present.EscapeLine(file), len(gone))
			}
			fmt.Fprintln(w, "settings:")
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			st := l.Settings
			turns, steps := fmt.Sprint(defaultMaxTurns), fmt.Sprint(defaultMaxSteps)
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
				{"model", st.Model}, {"approve", cmpOr(st.Approve, "ask")},
				{"allow", strings.Join(st.Allow, ", ")}, {"deny", strings.Join(st.Deny, ", ")},
				{"max_turns", turns}, {"max_steps", steps}, {"context_window", window},
				{"sandbox", cmpOr(st.Sandbox, "workspace-write")}, {"network", fmt.Sprint(st.Network)}, {"network_allow", strings.Join(st.NetworkAllow, ", ")},
				{"instructions_max_bytes", insMax}, {"worktrees", cmpOr(st.Worktrees, facts.WorktreesParallel)}, {"worktree_merge", cmpOr(st.WorktreeMerge, facts.WorktreeMergeAsk)},
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
				fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", kv.key, dash(present.EscapeLine(kv.value)), from)
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
			printNetwork(w, l.NetworkView())
			fmt.Fprintln(w, "instructions (given to the model before each turn, as the project's text; a thread adds the AGENTS.md on the way to the paths it touches):")
			if len(ins) == 0 {
				fmt.Fprintf(w, "  none: no %s at the workspace root, nor the user's (%s)\n", stock.InstructionsName, present.EscapeLine(dash(stock.UserInstructionsFile(a.getenv))))
			}
			for _, f := range ins {
				if f.Skipped != "" {
					fmt.Fprintf(w, "  %-8s %s: left out — %s\n", f.Scope, present.EscapeLine(f.Path), present.EscapeLine(f.Skipped))
					continue
				}
				fmt.Fprintf(w, "  %-8s %s: %d bytes, sha256 %s\n", f.Scope, present.EscapeLine(f.Path), f.Size, f.Digest[:12])
			}
			if len(agents) > 0 {
				fmt.Fprintln(w, "agents (a delegation may name one; harness agents says more):")
				for _, ag := range agents {
					if ag.Err != nil {
						fmt.Fprintf(w, "  %s: cannot be used — %s\n", ag.Name, present.EscapeLine(personError(ag.Err)))
						continue
					}
					fmt.Fprintf(w, "  %-8s %s: sha256 %.12s%s\n", ag.Agent.Scope, present.EscapeLine(ag.Agent.Path), ag.Agent.Digest, present.EscapeLine(agentModelWords(ag.Agent)))
				}
			}
			if hooks := l.HookViews(); len(hooks) > 0 {
				fmt.Fprintln(w, "hooks, in the order they run:")
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if lerr != nil {
				return &exitErr{code: exitError} // said above, with the file
			}
			return nil
		}),
	}
	return cmd
}

// printNetwork says the network rule in force and where each allowed
// host comes from.
func printNetwork(w io.Writer, v stock.NetworkView) {
	switch v.Rule {
	case stock.NetworkOn:
		fmt.Fprintln(w, "network: on (commands use the network as you can)")
	case stock.NetworkOff:
		fmt.Fprintln(w, "network: off (commands have only their own loopback)")
	default:
		fmt.Fprintln(w, "network: allow-list (commands reach only these hosts, through the harness's proxy; each connection recorded):")
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
