package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
thread stops, so that a mistyped "deny" never goes unnoticed).`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			p, err := a.place()
			if err != nil {
				return err
			}
			l, lerr := p.LoadLayered(a.getenv)
			if a.jsonOut() {
				type fileJSON struct {
					Scope   stock.Scope `json:"scope"`
					Path    string      `json:"path"`
					Exists  bool        `json:"exists"`
					Set     []string    `json:"set,omitempty"`
					Unknown []string    `json:"unknown,omitempty"`
					Error   string      `json:"error,omitempty"`
				}
				out := struct {
					Settings stock.Settings           `json:"settings"`
					From     map[string][]stock.Scope `json:"from"`
					Files    []fileJSON               `json:"files"`
				}{l.Settings, l.From, []fileJSON{}}
				for _, s := range l.Sources {
					f := fileJSON{Scope: s.Scope, Path: s.Path, Exists: s.Exists, Set: s.Set, Unknown: s.Unknown}
					if s.Err != nil {
						f.Error = s.Err.Error()
					}
					out.Files = append(out.Files, f)
				}
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
				case s.Exists:
					state = "sets " + strings.Join(s.Set, ", ")
				}
				fmt.Fprintf(w, "  %-8s %s: %s\n", s.Scope, present.EscapeLine(s.Path), state)
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
			for _, kv := range []struct{ key, value string }{
				{"model", st.Model}, {"approve", cmpOr(st.Approve, "ask")},
				{"allow", strings.Join(st.Allow, ", ")}, {"deny", strings.Join(st.Deny, ", ")},
				{"max_turns", turns}, {"max_steps", steps},
				{"sandbox", cmpOr(st.Sandbox, "workspace-write")}, {"network", fmt.Sprint(st.Network)},
			} {
				from := "default"
				if scopes, ok := l.From[kv.key]; ok {
					names := make([]string, len(scopes))
					for i, s := range scopes {
						names[i] = string(s)
					}
					from = strings.Join(names, " + ")
				}
				fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", kv.key, dash(present.EscapeLine(kv.value)), from)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if lerr != nil {
				return &exitErr{code: exitError} // said above, with the file
			}
			return nil
		}),
	}
	return cmd
}
