package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
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
and the agents defined in files (see harness agents). The network rule in
force is shown as --network takes it (on, off, or allow=HOST,...), each
allowed host with the file that gave it.

` + trustHelp,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			p, err := a.place()
			if err != nil {
				return err
			}
			in, lerr, err := p.InForce(cmd.Context(), a.getenv)
			if err != nil {
				return err
			}
			c := tell.Settings(in)
			if a.jsonOut() {
				return a.printJSON(c.Doc())
			}
			if err := tell.Config(a.stdout, c); err != nil {
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
