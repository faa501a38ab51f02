package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

func (a *app) showCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show THREAD [CHILD/]SEQ|ACTION",
		Short: "Show one action whole (request, sandbox, report, output, observation, diffs, check), or one model turn with its kept request and response",
		Long: `Show one step of a thread whole. SEQ is a fact's seq; ACTION an action id
(1-call_1, as the log names it). CHILD/ACTION (t1.1-d1/1-w, as the parent's
prompt and threads name a child's request) is a step of a thread of the tree.

An action: the call and its arguments (a command as the shell reads it, with
its timeout), the sandbox it ran in, the confirmation and who answered it, the
report (status, exit code, time, error), the whole stdout and stderr, the
runtime's own observation with each changed path and its diff (from the
contents the store kept), the effect state and the check.

A model turn: its text and calls, its tokens, and the exact request and
response bytes the provider exchanged, as kept in the store.

Any other fact: its payload.`,
		Args:              args(2, 2, "THREAD and a SEQ or ACTION"),
		ValidArgsFunction: a.completeShow,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, what := args[0], args[1]
			open := id // a step of a child: the child must be there
			if child, _, ok := strings.Cut(what, "/"); ok && strings.HasPrefix(child, id+".") {
				open = child
			}
			s, err := a.openThreadRead(ctx, open)
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.Step(ctx, id, what)
			if errors.Is(err, stock.ErrNoAction) {
				return fmt.Errorf("%w; `harness effects` lists its actions, `harness log %s` its seqs", err, st.Thread)
			} else if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(tell.StepDoc(st))
			}
			tell.Step(a.stdout, st)
			return nil
		}),
	}
	return cmd
}
