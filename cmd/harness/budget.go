package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
)

// budgetFlags are --max-cost and --max-tokens: the tree's budget in money
// and tokens; turns is budget's --turns (a raise of the root's bound in
// model turns).
type budgetFlags struct {
	cost   float64
	tokens int64
	turns  int64
}

func (f *budgetFlags) add(fl *pflag.FlagSet) {
	fl.Float64Var(&f.cost, "max-cost", 0, "the budget of the thread's tree in `USD` (its children spend from it as they go): a model turn it cannot cover waits for a person (harness budget THREAD raise); 0 is none (default: the settings' max_cost). Recorded when the thread starts; on a resume, sets it anew")
	fl.Int64Var(&f.tokens, "max-tokens", 0, "the budget of the thread's tree in `TOKENS` (input and output, its children's included), as --max-cost; 0 is none (default: the settings' max_tokens)")
	alias(fl, map[string]string{"budget-usd": "max-cost", "budget-tokens": "max-tokens"})
}

// alias makes each key of names another spelling of the flag it names.
func alias(fl *pflag.FlagSet, names map[string]string) {
	prev := fl.GetNormalizeFunc()
	fl.SetNormalizeFunc(func(fs *pflag.FlagSet, name string) pflag.NormalizedName {
		if to, ok := names[name]; ok {
			name = to
		}
		return prev(fs, name)
	})
}

// bounds are the bounds in money and tokens of the flags named cost and
// tokens given in fs.
func (f *budgetFlags) bounds(fs *pflag.FlagSet, cost, tokens string) drive.Bounds {
	var b drive.Bounds
	if fs.Changed(cost) {
		b.USD = &f.cost
	}
	if fs.Changed(tokens) {
		b.Tokens = &f.tokens
	}
	return b
}

// budgetCmd shows, raises or sets the budget of a thread's tree.
func (a *app) budgetCmd() *cobra.Command {
	var f answerFlags
	var b budgetFlags
	cmd := &cobra.Command{
		Use:   "budget THREAD [raise|set] [--cost USD] [--tokens N] [--turns N] [--resume]",
		Short: "Show, raise or set the budget in money, tokens and model turns that a thread's tree spends from",
		Long: `A thread started with --max-cost or --max-tokens (or the settings' max_cost,
max_tokens) records its budget (budget.set); its children spend from the same
budget as they go. A model turn the budget cannot cover is not run: the thread
(or the child) waits for a person, status parked, waiting for "budget".
A root thread that ran its --max-turns model turns (its children's counted
once they report) waits the same way, and is raised by a number of turns.

  harness budget t1                       what the tree spent, of what
  harness budget t1 raise --cost 5        add $5 (budget.raised; who and how much)
  harness budget t1 --usd +5              the same
  harness budget t1 set --tokens 200000   set it anew
  harness budget t1 raise --turns 10      10 more model turns than --max-turns
  harness budget t1 raise --cost 5 --resume

THREAD may be any thread of the tree: the budget is its root's.`,
		Args: args(1, 2, "THREAD and optionally raise or set"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, verb := args[0], ""
			if len(args) == 2 {
				verb = args[1]
			}
			if verb != "" && verb != "raise" && verb != "set" {
				return usageError("budget %s %s: want raise or set", id, verb)
			}
			if err := a.checkBy(f.by); err != nil {
				return err
			}
			amount := facts.Spend{USD: b.cost, Tokens: b.tokens, Turns: b.turns}
			if err := amount.Validate(); err != nil {
				return usageError("budget: %v", err)
			}
			if verb == "set" && cmd.Flags().Changed("turns") {
				return usageError("budget %s set --turns: the bound in model turns is --max-turns; raise it: harness budget %s raise --turns N", id, id)
			}
			if verb == "" && !amount.IsZero() {
				verb = "raise" // harness budget t1 --usd +5
			}
			// The budget is the tree's root's; the store is let go of
			// before a raise opens it to answer.
			s, err := a.openThreadRead(ctx, id)
			if err != nil {
				return err
			}
			root, err := harness.RootOf(ctx, s.Store, id)
			var st drive.State
			if err == nil && verb == "" {
				st, err = s.Inspect(ctx, root)
			}
			s.Close()
			switch {
			case err != nil:
				return err
			case verb == "" && a.jsonOut():
				return a.printJSON(tell.BudgetDocOf(st))
			case verb == "":
				tell.Budget(a.stdout, st, "start one with --max-cost, --max-tokens")
				return nil
			}
			if verb == "raise" && amount.IsZero() {
				return usageError("budget %s raise: say by how much: --cost USD, --tokens N, --turns N", id)
			}
			if verb == "set" && !cmd.Flags().Changed("cost") && !cmd.Flags().Changed("tokens") {
				return usageError("budget %s set: say what to: --cost USD, --tokens N (0: none)", id)
			}
			return a.answering(ctx, root, &f, false, func(dr *driver) error {
				var p harness.Posted
				var err error
				if verb == "raise" {
					p, err = drive.GrowBudget(ctx, dr.Thread, amount, a.whoami())
				} else {
					p, err = drive.SetBounds(ctx, dr.Thread, b.bounds(cmd.Flags(), "cost", "tokens"), a.whoami(), "budget set", false)
				}
				if errors.Is(err, drive.ErrNoBound) {
					st, serr := drive.Inspect(ctx, dr.Thread)
					if serr == nil && len(drive.BudgetBounds(st)) > 0 {
						raise, _, _ := strings.Cut(budgetHint(tell.ShellWord(root), "", drive.BudgetBounds(st)), "   (")
						return usageError("%v; %s, or set another bound: harness budget %s set --cost USD or --tokens N", err, raise, tell.ShellWord(root))
					}
					return usageError("%v; set one: harness budget %s set --cost USD or --tokens N", err, tell.ShellWord(root))
				}
				if err != nil {
					return drive.Refused(err, root, facts.KindBudgetRaised)
				}
				return dr.posted(ctx, p, &f)
			})
		}),
	}
	cmd.Flags().Float64Var(&b.cost, "cost", 0, "an amount in `USD` (also --usd); with no raise or set, a raise: --usd +5")
	cmd.Flags().Int64Var(&b.tokens, "tokens", 0, "an amount of `TOKENS`")
	cmd.Flags().Int64Var(&b.turns, "turns", 0, "a number of model `TURNS` to raise the root's bound in turns (--max-turns) by")
	alias(cmd.Flags(), map[string]string{"usd": "cost"})
	f.add(cmd)
	return cmd
}

// budgetHint is the command that answers a budget wait of the tree of the
// thread id (a shell word already), offering the bounds raise names
// (drive.Pending.Raise; all of them when none is named).
func budgetHint(id, resume string, raise []string) string {
	var flags []string
	for _, b := range raise {
		flags = append(flags, raiseFlags[b])
	}
	if len(flags) == 0 {
		flags = []string{raiseFlags[drive.BoundUSD], raiseFlags[drive.BoundTokens], raiseFlags[drive.BoundTurns]}
	}
	offer := flags[len(flags)-1]
	if len(flags) > 1 {
		offer = strings.Join(flags[:len(flags)-1], ", ") + " or " + offer
	}
	return fmt.Sprintf("raise it: harness budget %s raise %s%s   (or stop: harness stop %s)", id, offer, resume, id)
}

// raiseFlags are the flags of budget raise, by the bound each raises.
var raiseFlags = map[string]string{drive.BoundUSD: "--cost USD", drive.BoundTokens: "--tokens N", drive.BoundTurns: "--turns N"}
