package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// Shell completion (cobra's: `harness completion bash|zsh|fish|powershell`
// prints the script; the shell calls `harness __complete ARGS…`): thread
// ids, with their status and title, the requests a thread waits on, and
// the values of flags that take one of a few. Completing never waits for
// a store another command holds, and never writes.

// complete is what of says of the store (stock.Complete), as cobra
// gives it to the shell.
func (a *app) complete(cmd *cobra.Command, of func(context.Context, *stock.Session) ([]drive.Completion, error)) []cobra.Completion {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := a.place()
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, c := range stock.Complete(ctx, p, a.getenv, of) {
		out = append(out, cobra.CompletionWithDesc(c.Value, c.About))
	}
	return out
}

// completeThreads completes a first argument that is a thread id.
func (a *app) completeThreads(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.threadIDs(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// threadIDs are the store's thread ids that start with prefix
// (stock.Session.ThreadCompletions).
func (a *app) threadIDs(cmd *cobra.Command, prefix string) []cobra.Completion {
	return a.complete(cmd, func(ctx context.Context, s *stock.Session) ([]drive.Completion, error) {
		return s.ThreadCompletions(ctx, prefix)
	})
}

// completeRequests completes THREAD, then a request of kind it waits on.
func (a *app) completeRequests(kind fold.WaitKind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return a.completeStep(cmd, args, toComplete, func(ctx context.Context, s *stock.Session) ([]drive.Completion, error) {
			st, err := s.Inspect(ctx, args[0]) // a parent's tree: its children's requests too
			return drive.RequestCompletions(st, kind, toComplete), err
		})
	}
}

// completeShow completes THREAD, then the thread's action ids.
func (a *app) completeShow(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeStep(cmd, args, toComplete, func(ctx context.Context, s *stock.Session) ([]drive.Completion, error) {
		r, err := s.Reading(ctx, args[0])
		return drive.ActionCompletions(r, toComplete), err
	})
}

// completeStep completes THREAD, then what of the thread of (a valid id)
// says.
func (a *app) completeStep(cmd *cobra.Command, args []string, toComplete string, of func(context.Context, *stock.Session) ([]drive.Completion, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return a.threadIDs(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	if len(args) > 1 || thread.ValidateID(args[0]) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.complete(cmd, of), cobra.ShellCompDirectiveNoFileComp
}

// completeFlag completes the flag name of cmd with one of values.
func completeFlag(cmd *cobra.Command, name string, values ...string) {
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// completeDriveFlags completes the values of the flags that drive a thread.
func completeDriveFlags(cmd *cobra.Command) {
	completeFlag(cmd, "approve", "ask", "writes", "all")
	completeFlag(cmd, "sandbox", "workspace-write", "read-only", "off")
	completeFlag(cmd, "worktrees", "parallel", "always", "off")
	completeFlag(cmd, "worktree-merge", "ask", "branch")
	_ = cmd.RegisterFlagCompletionFunc("model", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if strings.HasPrefix(toComplete, "scripted:") {
			return nil, cobra.ShellCompDirectiveDefault // a file after the prefix
		}
		return []cobra.Completion{"scripted:", "openai:", "anthropic:"}, cobra.ShellCompDirectiveNoSpace
	})
}
