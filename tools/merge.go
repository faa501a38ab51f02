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
}

// MergeTool returns the tool that brings into the workspace at root what a
// child thread left on its worktree's branch since its base (as its report
// names them): a write, which asks a person first; its preview is the
// branch's diff (Preview). The change applies all at once, or — when it
// conflicts with the workspace as it is now — not at all: the call fails
// saying where, and the branch keeps the change. Only a thread's branch
// (worktree.Branch) whose base is its ancestor is taken.
func MergeTool(root string) Tool {
	return &tool{
		name: MergeWorktree,
		description: "Bring a child's changes, made in its own worktree, into the workspace: name the branch and base its report gave. " +
			"A person approves it, seeing the diff. It applies all at once, or not at all when it conflicts with the workspace (then the branch keeps it).",
		schema: json.RawMessage(`{"type":"object","properties":{` +
			`"branch":{"type":"string","description":"the child's branch (harness/…)"},` +
			`"base":{"type":"string","description":"the commit the child began from, as its report named it"}},` +
			`"required":["branch","base"],"additionalProperties":false}`),
		capability: action.Write,
		confirm:    true,
		run: func(ctx context.Context, raw json.RawMessage, _ *facts.Sandbox) (facts.Report, error) {
			var a mergeArgs
			if err := json.Unmarshal(raw, &a); err != nil || a.Branch == "" || a.Base == "" {
				return failed(MergeWorktree, fmt.Errorf("%w: the arguments name no branch and base (want {\"branch\": NAME, \"base\": COMMIT})", ErrInvalidArgs)), nil
			}
			applied, err := worktree.Apply(ctx, root, a.Branch, a.Base)
			if cerr := ctx.Err(); cerr != nil {
				return facts.Report{}, cerr
			}
			switch {
			case errors.Is(err, worktree.ErrConflict):
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
	if err := json.Unmarshal([]byte(args), &a); err != nil || a.Branch == "" || a.Base == "" {
		return "(no preview: the arguments do not name a branch and base)"
	}
	diff, err := worktree.Diff(context.Background(), root, a.Branch, a.Base)
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
