package main

import (
	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
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
			return tell.Agents(a.stdout, out, user)
		}),
	}
}
