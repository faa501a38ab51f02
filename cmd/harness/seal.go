package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// sealHelp says what a seal is, for key's, seal's and replay's help.
const sealHelp = `Seals: you have an ed25519 key, made on first use in your own configuration
directory ($XDG_CONFIG_HOME/harness/seal/key.pem, mode 0600; never in a
workspace or a store, and hidden from every command the agent runs). When a
thread parks, is done, fails or is stopped — whichever command, server or
worker drove it — its head (thread, seq, hash) is signed and appended to your
witness log beside the key (witness.jsonl: hash-chained, appended to only).
replay --verify checks every seal it finds: a log rewritten with every hash
recomputed, a cut tail or a history forked after a sealed head fails, naming
the seal.`

func (a *app) keyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "key",
		Short: "Print your public key, which signs the heads of your threads (made on first use)",
		Long: `Print your public key (ed25519:BASE64), making your key first if you have none.
Give it to whoever verifies your seals: harness replay --verify THREAD --key
KEY (or a file of keys), with your witness log (--witness FILE).

` + sealHelp,
		Example: `  harness key > ana.pub                 # share it
  harness key -o json                   # the key, its file and your witness log`,
		Args: args(0, 0, ""),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			k, path, made, err := stock.UserKey(a.getenv)
			if err != nil {
				return err
			}
			w, err := stock.UserWitness(a.getenv)
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(tell.KeyDoc{Key: k.Public(), Path: path, Witness: w.Path, Made: made})
			}
			if made {
				fmt.Fprintf(a.stderr, "harness: made your key in %s\n", present.EscapeLine(path))
			}
			_, err = fmt.Fprintln(a.stdout, k.Public())
			return err
		}),
	}
}

func (a *app) sealCmd() *cobra.Command {
	var gitNote bool
	cmd := &cobra.Command{
		Use:   "seal THREAD",
		Short: "Sign the thread's head now, into your witness log (after verifying its log)",
		Long: `Verify the thread's log as replay --verify does, then sign its head (thread,
seq, hash) with your key and append the seal to your witness log. A thread is
sealed on its own whenever it parks or ends; seal is for a head you want to
vouch for now. A log that does not verify is not sealed.

With --git-note (or "seal_git_notes": true in your own settings file, which
also notes the seals made when threads park or end), the seal is also written
as a line of a git note on the workspace's HEAD, under refs/notes/harness-seals:
push that ref and whoever has your public key can verify the thread's log
(replay --verify reads the seals it finds there). A notes ref that is a
symbolic ref is refused.

` + sealHelp,
		Args:              args(1, 1, "THREAD"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			s, err := a.openThreadRead(ctx, id)
			if err != nil {
				return err
			}
			defer s.Close()
			// The head signed is the head checked: read before the
			// check, and the seal refused if the log moved meanwhile.
			e, witness, err := s.Place.SealHead(ctx, a.getenv, s.Store, s.Stock.Actor, id, gitNote || a.layered.Settings.SealGitNotes) // your settings may ask for notes
			if err != nil && !(errors.Is(err, seal.ErrNotAnchored) && e.Sig != nil) {
				return err
			}
			if err != nil {
				fmt.Fprintf(a.stderr, "harness: warning: %s\n", tell.PersonError(err))
			}
			if a.jsonOut() {
				return a.printJSON(seal.Verdict{Found: seal.Found{Entry: e, Witness: witness}, Status: seal.StatusHolds})
			}
			_, err = fmt.Fprintf(a.stdout, "%s thread %s at seq %d (%s) by %s, in %s\n", a.paint("green", "sealed:"), id, e.Seq, e.Hash.String()[:12], e.Key, present.EscapeLine(witness))
			return err
		}),
	}
	cmd.Flags().BoolVar(&gitNote, "git-note", false, "write the seal also as a git note on the workspace's HEAD (refs/notes/harness-seals)")
	return cmd
}

// sealFlags are replay --verify's: whose seals to trust, and where else
// to look for them.
type sealFlags struct {
	keys      []string
	witnesses []string
}

// check parses the flags (stock.SealCheckOf).
func (f sealFlags) check() (stock.SealCheck, error) {
	c, err := stock.SealCheckOf(f.keys, f.witnesses)
	switch {
	case errors.Is(err, stock.ErrWitnessLog):
		return c, asUsage(fmt.Errorf("--witness: %w", err))
	case err != nil:
		return c, asUsage(fmt.Errorf("--key: %w", err))
	}
	return c, nil
}
