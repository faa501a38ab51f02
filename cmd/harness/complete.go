package main

import (
	"context"
	"strings"
	"time"

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

// completionWait bounds the look at the store a completion takes.
const completionWait = 2 * time.Second

// quietSession opens the store for a completion: nothing created, no
// waiting, nothing said on stderr.
func (a *app) quietSession(ctx context.Context) (*session, error) {
	p, err := a.place()
	if err != nil {
		return nil, err
	}
	ss, err := stock.OpenSession(ctx, p, stock.SessionOptions{Getenv: a.getenv, Lenient: true, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	s := &session{Session: ss}
	return s, nil
}

func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionWait)
}

// completeThreads completes a first argument that is a thread id.
func (a *app) completeThreads(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.threadIDs(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// threadIDs are the store's thread ids that start with prefix, the one
// active last first, each described by its status and title.
func (a *app) threadIDs(cmd *cobra.Command, prefix string) []cobra.Completion {
	ctx, cancel := completionContext(cmd)
	defer cancel()
	s, err := a.quietSession(ctx)
	if err != nil {
		return nil
	}
	defer s.Close()
	rows, _, err := s.Threads(ctx, drive.ListOptions{})
	if err != nil {
		return nil
	}
	return completions(drive.ThreadCompletions(rows, prefix))
}

// completions are cs as cobra gives them to the shell.
func completions(cs []drive.Completion) []cobra.Completion {
	var out []cobra.Completion
	for _, c := range cs {
		out = append(out, cobra.CompletionWithDesc(c.Value, c.About))
	}
	return out
}

// completeRequests completes THREAD, then a request of kind it waits on.
func (a *app) completeRequests(kind fold.WaitKind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return a.completeStep(cmd, args, toComplete, func(ctx context.Context, s *session) ([]drive.Completion, error) {
			st, err := s.Inspect(ctx, args[0]) // a parent's tree: its children's requests too
			return drive.RequestCompletions(st, kind, toComplete), err
		})
	}
}

// completeShow completes THREAD, then the thread's action ids.
func (a *app) completeShow(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeStep(cmd, args, toComplete, func(ctx context.Context, s *session) ([]drive.Completion, error) {
		r, err := s.Reading(ctx, args[0])
		return drive.ActionCompletions(r, toComplete), err
	})
}

// completeStep completes THREAD, then what of the thread of (a valid id)
// says.
func (a *app) completeStep(cmd *cobra.Command, args []string, toComplete string, of func(context.Context, *session) ([]drive.Completion, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return a.threadIDs(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	if len(args) > 1 || thread.ValidateID(args[0]) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	s, err := a.quietSession(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer s.Close()
	cs, err := of(ctx, s)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completions(cs), cobra.ShellCompDirectiveNoFileComp
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
