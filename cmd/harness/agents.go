package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/harness"
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
it cannot be used, and the model its child runs on when the file names one.
A model delegates to one with {"agent": NAME}.

A file inside the workspace that names a model other than the delegating
thread's is a widening (another provider, your credentials for it, its
prices): a delegation to it is refused until you trust that file's content
(harness trust .harness/agents/NAME.md). Your own files choose as they say.`,
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
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s%s\n", e.Name, j.Scope, present.EscapeLine(tools), turns, digest, present.EscapeLine(dash(j.Description)), present.EscapeLine(agentModelWords(j)))
			}
			return w.Flush()
		}),
	}
}

// agentModelWords says which model an agent's child runs on, when its
// file names one, and whether the file may choose it.
func agentModelWords(ag harness.Agent) string {
	switch {
	case ag.Model == "":
		return ""
	case ag.ModelTrusted:
		return " · model " + ag.Model
	}
	return " · model " + ag.Model + " (not trusted: used only where it is the parent's model; harness trust " + ag.Path + ")"
}
