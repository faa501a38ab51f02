package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// trustHelp says what trust is, for trust's help and config's.
const trustHelp = `A settings file inside the workspace (.harness/project.json, and the store's
config.json when the store is inside the workspace) may have been written by
anyone who could write the workspace: a cloned repository's authors, or a
command the agent ran. What it says applies without asking only where it
narrows authority: deny patterns, a stricter sandbox, network off, a stricter
approval mode, lower max_turns, max_steps or context_window. The keys that
widen authority — approve (looser), allow, sandbox (looser), network,
mcpServers (and their trusted, network, timeout, ${VAR}s), serve (tokens,
auto, addr), model (a provider's, not a script), raised max_turns, max_steps
or context_window — apply only once you trust that file's exact content. Until
then every command leaves them out and says so in one line; none asks, no
${VAR} in the file is expanded and no server it declares is started or
reached. Trust is remembered in your own configuration directory
($XDG_CONFIG_HOME/harness/trusted.json, outside every workspace) by the
workspace, the file and the SHA-256 of its content: a file that changes is
untrusted again. An agent file inside the workspace (.harness/agents/NAME.md)
that names a model is listed too: until you trust it, a delegation to that
agent is refused unless the model is the delegating thread's own. Your own file ($XDG_CONFIG_HOME/harness/config.json), a store
outside the workspace, and flags are yours: they apply as they are.`

func (a *app) trustCmd() *cobra.Command {
	var yes, revoke bool
	cmd := &cobra.Command{
		Use:   "trust [FILE...]",
		Short: "Review the workspace's settings files and trust what they widen (asks per file)",
		Long: `Show each settings file inside this workspace (or the FILEs named), the keys in
it that widen authority with their values as the file writes them, and whether
you trust its content; then, on a terminal, ask per file not trusted yet:
Trust this content? [y/N]. Only "y" or "yes" trusts it.

Without a terminal nothing is asked and nothing is trusted, unless --yes says
that you trust every file listed as it is now (the content listed, by its
digest: a file changed after the listing is not trusted). -o json only lists,
and never trusts. --revoke forgets the trust in the workspace's files (or the
FILEs named): their widening keys are left out again.

` + trustHelp,
		Example: `  harness trust                           # review and answer per file
  harness trust -o json                   # list what each file widens; trusts nothing
  harness trust --yes .harness/project.json   # trust that file's current content, no prompt
  harness trust --revoke                  # forget the trust in this workspace's files`,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if a.jsonOut() && (yes || revoke) {
				return usageError("trust -o json only lists; drop -o json to trust (--yes) or to forget (--revoke)")
			}
			if yes && revoke {
				return usageError("trust --yes --revoke: pick one")
			}
			p, err := a.place()
			if err != nil {
				return err
			}
			l, lerr := p.LoadLayered(a.getenv)
			if lerr != nil && errors.Is(lerr, stock.ErrTrustFile) {
				fmt.Fprintf(a.stderr, "harness: %s\n", tell.PersonError(lerr))
			}
			files, err := stock.TrustSources(cmd.Context(), p, l, a.getenv, args)
			if errors.Is(err, stock.ErrNotTrustable) {
				return asUsage(err)
			} else if err != nil {
				return err
			}
			if revoke {
				revoked, err := p.RevokeTrustIn(a.getenv, files, len(args) == 0)
				for _, r := range revoked {
					tell.Revoked(a.stdout, p.Root, r.Path, r.Had)
				}
				return err
			}
			if a.jsonOut() {
				return a.printJSON(tell.TrustDocs(files))
			}
			if len(files) == 0 {
				fmt.Fprintln(a.stdout, "no settings file inside this workspace: nothing to trust")
				return nil
			}
			ask := a.interactive(false)
			asker := &tell.Asker{Teller: a.teller(), In: a.stdin}
			pending, err := asker.AskTrust(cmd.Context(), files, yes, ask, func(s stock.SettingsSource) error { return p.TrustSource(a.getenv, s) })
			if err != nil {
				return err
			}
			if pending > 0 && !ask {
				fmt.Fprintf(a.stderr, "harness: not a terminal: nothing asked, nothing trusted; to trust the content listed above, pass --yes\n")
				return &exitErr{code: exitError}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "trust every file listed, as it is now, without asking (for scripts: you have read what it widens)")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the trust in the workspace's settings files (or the FILEs named)")
	return cmd
}
