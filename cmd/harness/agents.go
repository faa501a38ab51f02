package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

func (a *app) agentsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "agents",
		Short: "List the agents a delegation may name: the workspace's .harness/agents and yours",
		Long: `List the agents defined in files: <workspace>/.harness/agents/NAME.md and
$XDG_CONFIG_HOME/harness/agents/NAME.md (a project file hides yours of the same
name). Each is shown with its scope, description, tools (all of the parent's
when the file names none), turns at most and the digest of its bytes, or why
it cannot be used. A model delegates to one with {"agent": NAME}.`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			p, err := a.place()
			if err != nil {
				return err
			}
			l, _ := p.LoadLayered(a.getenv)
			out, user, err := stock.ListAgents(cmd.Context(), p, l.Settings, a.getenv)
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(out)
			}
			if len(out) == 0 {
				fmt.Fprintln(a.stdout, "no agents: none in .harness/agents, nor yours ("+present.EscapeLine(dash(user))+")")
				return nil
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tSCOPE\tTOOLS\tTURNS\tDIGEST\tDESCRIPTION")
			for _, e := range out {
				if e.Err != nil {
					fmt.Fprintf(w, "%s\t-\t-\t-\t-\terror: %s\n", e.Name, present.EscapeLine(personError(e.Err)))
					continue
				}
				j := e.Agent
				tools := "(the parent's)"
				if j.Tools != nil {
					tools = dash(strings.Join(j.Tools, ","))
				}
				turns := "-"
				if j.MaxTurns > 0 {
					turns = fmt.Sprint(j.MaxTurns)
				}
				digest := j.Digest
				if len(digest) > 12 {
					digest = digest[:12]
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, j.Scope, present.EscapeLine(tools), turns, digest, present.EscapeLine(dash(j.Description)))
			}
			return w.Flush()
		}),
	}
}
