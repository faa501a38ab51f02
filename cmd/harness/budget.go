package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
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

// layer adds the budget flags given to a layer of settings.
func (f *budgetFlags) layer(fs *pflag.FlagSet, s *stock.Settings, set []string) ([]string, error) {
	if fs == nil {
		return set, nil
	}
	if fs.Changed("max-cost") {
		if math.IsNaN(f.cost) || math.IsInf(f.cost, 0) || f.cost < 0 {
			return set, usageError("--max-cost %v: want US dollars ≥ 0, or 0 for no budget", f.cost)
		}
		s.MaxCost, set = &f.cost, append(set, "max_cost")
	}
	if fs.Changed("max-tokens") {
		if f.tokens < 0 {
			return set, usageError("--max-tokens %d: want a number of tokens ≥ 0, or 0 for no budget", f.tokens)
		}
		s.MaxTokens, set = &f.tokens, append(set, "max_tokens")
	}
	return set, nil
}

// given reports whether a budget flag was given.
func (f *budgetFlags) given(fs *pflag.FlagSet) bool {
	return fs != nil && (fs.Changed("max-cost") || fs.Changed("max-tokens"))
}

// startingBudget is the budget.set a thread started with the session's
// settings records, if they give one.
func (a *app) startingBudget(s *session) ([]harness.Ingress, error) {
	in, ok, err := s.StartingBudget(a.whoami())
	if err != nil || !ok {
		return nil, asUsage(err)
	}
	return []harness.Ingress{in}, nil
}

// setBudget records on the thread, a root, the budget the flags give, on
// a command that drives a thread that exists: a person's word, which may
// raise it. The bound a flag leaves out stays as recorded.
func (d *driver) setBudget(ctx context.Context, f *driveFlags) error {
	if err := d.raiseTurns(ctx, f); err != nil {
		return err
	}
	if !f.budget.given(f.fs) {
		return nil
	}
	st, err := drive.Inspect(ctx, d.th)
	if err != nil {
		return err
	}
	if st.Parent != "" {
		return usageError("--max-cost, --max-tokens: thread %s is a child; its budget is its tree's, set on %s", d.id, st.Root)
	}
	limit := facts.Spend{}
	if st.Budget != nil {
		limit = st.Budget.Limit
	}
	if f.fs.Changed("max-cost") {
		limit.USD = f.budget.cost
	}
	if f.fs.Changed("max-tokens") {
		limit.Tokens = f.budget.tokens
	}
	if st.Budget != nil && st.Budget.Limit == limit {
		return nil
	}
	_, err = drive.SetBudget(ctx, d.th, limit, d.a.whoami(), "flag")
	return err
}

// raiseTurns makes --max-turns, on a command that drives a root thread
// that records its bound in turns, a raise of that bound to it (a
// person's word, budget.raised): the log's bound, not a process's flag,
// is what every reader sees. It cannot lower or remove the bound.
func (d *driver) raiseTurns(ctx context.Context, f *driveFlags) error {
	if f.fs == nil || !f.fs.Changed("max-turns") {
		return nil
	}
	st, err := drive.Inspect(ctx, d.th)
	if err != nil {
		return err
	}
	b := st.View.Budget
	if b == nil || !b.TurnsWait || b.MaxTurns == 0 || f.maxTurns == b.MaxTurns {
		return nil // a log from before, a child, or no bound: the flag is the configuration's
	}
	if f.maxTurns == 0 || f.maxTurns < b.MaxTurns {
		return usageError("--max-turns %d: thread %s records its bound of %d model turns, which a resume may raise but not lower or remove", f.maxTurns, d.id, b.MaxTurns)
	}
	_, err = drive.RaiseBudget(ctx, d.th, facts.Spend{Turns: int64(f.maxTurns - b.MaxTurns)}, d.a.whoami())
	return err
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
			root, err := a.rootOf(ctx, id)
			if err != nil {
				return err
			}
			if verb == "" && !amount.IsZero() {
				verb = "raise" // harness budget t1 --usd +5
			}
			if verb == "" {
				return a.showBudget(ctx, root)
			}
			if verb == "raise" && amount.IsZero() {
				return usageError("budget %s raise: say by how much: --cost USD, --tokens N, --turns N", id)
			}
			if verb == "set" && !cmd.Flags().Changed("cost") && !cmd.Flags().Changed("tokens") {
				return usageError("budget %s set: say what to: --cost USD, --tokens N (0: none)", id)
			}
			s, approval, err := a.openAnswering(ctx, root, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			dr, err := a.newDriver(s, root, approval, &f.drive)
			if err != nil {
				return err
			}
			dr.retry = true
			if err := dr.openTree(ctx); err != nil {
				return err
			}
			var p harness.Posted
			if verb == "raise" {
				p, err = drive.GrowBudget(ctx, dr.th, amount, a.whoami())
			} else {
				st, ierr := drive.Inspect(ctx, dr.th)
				if ierr != nil {
					return ierr
				}
				limit := facts.Spend{}
				if st.Budget != nil {
					limit = st.Budget.Limit
				}
				if cmd.Flags().Changed("cost") {
					limit.USD = b.cost
				}
				if cmd.Flags().Changed("tokens") {
					limit.Tokens = b.tokens
				}
				p, err = drive.SetBudget(ctx, dr.th, limit, a.whoami(), "budget set")
			}
			if err != nil {
				return refused(err, root, facts.KindBudgetRaised)
			}
			return dr.posted(ctx, p, &f)
		}),
	}
	cmd.Flags().Float64Var(&b.cost, "cost", 0, "an amount in `USD` (also --usd); with no raise or set, a raise: --usd +5")
	cmd.Flags().Int64Var(&b.tokens, "tokens", 0, "an amount of `TOKENS`")
	cmd.Flags().Int64Var(&b.turns, "turns", 0, "a number of model `TURNS` to raise the root's bound in turns (--max-turns) by")
	alias(cmd.Flags(), map[string]string{"usd": "cost"})
	f.add(cmd)
	return cmd
}

// rootOf is the root of the tree of the thread id.
func (a *app) rootOf(ctx context.Context, id string) (string, error) {
	s, err := a.openThreadRead(ctx, id)
	if err != nil {
		return "", err
	}
	defer s.Close()
	return harness.RootOf(ctx, s.Store, id)
}

// showBudget prints the budget of the tree whose root is root.
func (a *app) showBudget(ctx context.Context, root string) error {
	s, err := a.openThreadRead(ctx, root)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Inspect(ctx, root)
	if err != nil {
		return err
	}
	if a.jsonOut() {
		return a.printJSON(struct {
			Thread   string        `json:"thread"`
			Status   string        `json:"status"`
			Budget   *drive.Budget `json:"budget"`
			Turns    int           `json:"turns"`
			MaxTurns int           `json:"max_turns,omitempty"`
		}{root, string(st.Status), st.Budget, st.Turns, st.MaxTurns})
	}
	turns := ""
	if st.MaxTurns > 0 {
		turns = fmt.Sprintf("; %d of %d model turns", st.Turns, st.MaxTurns)
	}
	if st.Budget == nil {
		fmt.Fprintf(a.stdout, "thread %s (%s): no budget in money or tokens (start one with --max-cost, --max-tokens)%s\n", root, st.Status, turns)
		return nil
	}
	bd := st.Budget
	fmt.Fprintf(a.stdout, "thread %s (%s): spent %s of %s%s\n", root, st.Status, sayAmount(bd.Spent, bd.Limit), sayAmount(bd.Limit, bd.Limit), turns)
	return nil
}

// sayAmount says an amount, in the units limit bounds.
func sayAmount(s, limit facts.Spend) string {
	out := ""
	if limit.USD > 0 {
		out = fmt.Sprintf("$%.4f", s.USD)
	}
	if limit.Tokens > 0 {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%d tokens", s.Tokens)
	}
	return out
}

// budgetHint is the command that answers a budget wait of the tree of the
// thread id (a shell word already).
func budgetHint(id, resume string) string {
	return fmt.Sprintf("raise it: harness budget %s raise --cost USD, --tokens N or --turns N%s   (or stop: harness stop %s)", id, resume, id)
}

// askBudget asks the person by how much to raise the budget of the tree
// that waits on it (drive.ParseRaise reads the amount); Enter skips. One
// raise answers every budget wait of the tree: nothing else is asked
// after it (stop), and the tree goes on.
func (d *driver) askBudget(ctx context.Context, w drive.Pending, by string) (answer, error) {
	for {
		reply, err := d.prompter.ask(ctx, fmt.Sprintf("Raise the tree's budget (%s)? By how much, such as $5, 200000 tokens or 5 turns; Enter skips: ", present.EscapeLine(drive.Ref(w))))
		if err != nil {
			return answer{}, err
		}
		if strings.TrimSpace(reply) == "" {
			return answer{}, nil
		}
		add, err := drive.ParseRaise(reply)
		if err != nil {
			fmt.Fprintf(d.a.stdout, "    %s\n", present.EscapeLine(err.Error()))
			continue
		}
		return answer{reply: &drive.Reply{Kind: fold.WaitBudget, Request: drive.Ref(w), USD: add.USD, Tokens: add.Tokens, Turns: add.Turns, By: by}, stop: true}, nil
	}
}
