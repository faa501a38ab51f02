package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// agentJSON is an agent as `harness agents -o json` lists it.
type agentJSON struct {
	Name        string   `json:"name"`
	Scope       string   `json:"scope,omitempty"`
	Path        string   `json:"path,omitempty"`
	Description string   `json:"description,omitempty"`
	Tools       []string `json:"tools"`
	MaxTurns    int      `json:"max_turns,omitempty"`
	Digest      string   `json:"digest,omitempty"`
	Sandbox     string   `json:"sandbox,omitempty"`
	Error       string   `json:"error,omitempty"`
}

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
			out, user, err := a.agents(cmd.Context(), p, l.Settings)
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
			for _, j := range out {
				if j.Error != "" {
					fmt.Fprintf(w, "%s\t-\t-\t-\t-\terror: %s\n", j.Name, present.EscapeLine(j.Error))
					continue
				}
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
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, j.Scope, present.EscapeLine(tools), turns, digest, present.EscapeLine(dash(j.Description)))
			}
			return w.Flush()
		}),
	}
}

// agents reads the agents of the place p under the settings s, as the
// runtime would, and the user's agents directory.
func (a *app) agents(ctx context.Context, p stock.Place, s stock.Settings) ([]agentJSON, string, error) {
	in := stock.InstructionsOf(p, s, a.getenv)
	if u := stock.UserSettingsFile(a.getenv); u != "" {
		in.Hidden = append(in.Hidden, filepath.Dir(u))
	}
	r := stock.AgentsOf(in)
	list, err := r.List(ctx)
	if err != nil {
		return nil, r.User, err
	}
	out := make([]agentJSON, len(list))
	for i, e := range list {
		j := agentJSON{Name: e.Name, Scope: e.Agent.Scope, Path: e.Agent.Path, Description: e.Agent.Description,
			Tools: e.Agent.Tools, MaxTurns: e.Agent.MaxTurns, Digest: e.Agent.Digest, Sandbox: e.Agent.Sandbox}
		if e.Err != nil {
			j.Error = personError(e.Err)
		}
		out[i] = j
	}
	return out, r.User, nil
}
