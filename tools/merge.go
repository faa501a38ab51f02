package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/worktree"
)

// MergeWorktree is the name of the tool that brings a child's worktree
// branch into the workspace (scheduler.MergeTool).
const MergeWorktree = "merge_worktree"

// mergeArgs are the merge tool's arguments.
type mergeArgs struct {
	Branch string `json:"branch"`
	Base   string `json:"base"`
	Head   string `json:"head"`
}

// parse reads a merge call's arguments: a branch, base and head, each
// named (the head binds the call to the change a person is shown).
func (a *mergeArgs) parse(raw []byte) error {
	if err := json.Unmarshal(raw, a); err != nil || a.Branch == "" || a.Base == "" || a.Head == "" {
		return fmt.Errorf("%w: the arguments name no branch, base and head (want {\"branch\": NAME, \"base\": COMMIT, \"head\": COMMIT}, as the child's report gave them)", ErrInvalidArgs)
	}
	return nil
}

// MergeTool returns the tool that brings into the set's workspace what a
// child thread left on its worktree's branch from its base to its head
// (as its report names them): a write, which asks a person first; its
// preview is the diff from base to head (Preview). The head is in the
// arguments a person approves, so what is applied is exactly what was
// shown: a branch that moved since (a sibling, a command) fails the call,
// and nothing is applied. The change is merged three ways with the
// workspace as it is now (which may have moved since the child began:
// changes that do not overlap are both kept) and applies all at once, or
// — when it conflicts — not at all: the call fails saying where, and the
// branch keeps the change. Only a thread's branch
// (worktree.Branch) whose base is its ancestor is taken. A change that
// touches a file write_file would refuse here (.git, .harness, a hooks
// directory or a config file the person's git config names, a path the
// set protects; see Resolve) is refused whole, before anything is
// applied: a child's worktree is another directory, where those files are
// not the ones the person's git reads.
func (s *Set) MergeTool() Tool {
	root := s.ws.dir
	return &tool{
		name: MergeWorktree,
		description: "Bring a child's changes, made in its own worktree, into the workspace: name the branch, base and head its report gave. " +
			"A person approves it, seeing the diff. It applies all at once, or not at all when it conflicts with the workspace (then the branch keeps it).",
		schema: json.RawMessage(`{"type":"object","properties":{` +
			`"branch":{"type":"string","description":"the child's branch (harness/…)"},` +
			`"base":{"type":"string","description":"the commit the child began from, as its report named it"},` +
			`"head":{"type":"string","description":"the branch's last commit, as the report named it: only that change is applied"}},` +
			`"required":["branch","base","head"],"additionalProperties":false}`),
		capability: action.Write,
		confirm:    true,
		run: func(ctx context.Context, raw json.RawMessage, _ *facts.Sandbox) (facts.Report, error) {
			var a mergeArgs
			if err := a.parse(raw); err != nil {
				return failed(MergeWorktree, err), nil
			}
			may, done, err := s.ws.writeCheck()
			if err != nil {
				return failed(MergeWorktree, err), nil
			}
			applied, err := worktree.Apply(ctx, root, a.Branch, a.Base, a.Head, may)
			done()
			if cerr := ctx.Err(); cerr != nil {
				return facts.Report{}, cerr
			}
			switch {
			case errors.Is(err, worktree.ErrMoved):
				return failed(MergeWorktree, fmt.Errorf("nothing was changed: the branch is not at the head that was shown and approved: %w", err)), nil
			case errors.Is(err, worktree.ErrProtected):
				return failed(MergeWorktree, fmt.Errorf("nothing was changed, and branch %s keeps its change: %w", a.Branch, err)), nil
			case errors.Is(err, worktree.ErrConflict):
				var ce *worktree.ConflictError
				if errors.As(err, &ce) && len(ce.Paths) > 0 {
					return failed(MergeWorktree, fmt.Errorf("%s conflicts with the workspace: nothing was changed, and branch %s keeps its change (%w)", strings.Join(ce.Paths, ", "), a.Branch, ce.Err)), nil
				}
				return failed(MergeWorktree, fmt.Errorf("nothing was changed, and branch %s keeps its change: %w", a.Branch, err)), nil
			case err != nil:
				return failed(MergeWorktree, err), nil
			}
			out := fmt.Sprintf("merged %s (%.12s): ", a.Branch, applied.Head)
			if len(applied.Changed) == 0 {
				out += "nothing to change"
			} else {
				out += strings.Join(applied.Changed, ", ")
			}
			return facts.Report{Status: facts.StatusSucceeded, Stdout: out + "\n"}, nil
		},
	}
}

// mergePreview is the preview of a merge call: the branch's diff.
func mergePreview(root, args string) string {
	var a mergeArgs
	if err := a.parse([]byte(args)); err != nil {
		return "(no preview: the arguments do not name a branch, base and head)"
	}
	diff, err := worktree.Diff(context.Background(), root, a.Branch, a.Base, a.Head)
	if err != nil {
		return "(no preview: " + err.Error() + ")"
	}
	if diff == "" {
		return "(the branch changes nothing)"
	}
	if len(diff) > PreviewBytes {
		return fmt.Sprintf("(the diff is %d bytes: too long to show)", len(diff))
	}
	return diff
}
