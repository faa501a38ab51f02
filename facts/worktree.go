package facts

import "fmt"

// Worktree is a thread's own git worktree of the workspace, as the
// thread's spawn records it: where the thread works instead of the
// workspace, on which branch, from which commit. A replay reads this
// record; it never makes a worktree again.
type Worktree struct {
	// Repo is the top of the workspace's repository; Workspace the
	// workspace the tree was made of.
	Repo      string `msgpack:"repo,omitempty" json:"repo,omitempty"`
	Workspace string `msgpack:"workspace,omitempty" json:"workspace,omitempty"`
	// Path is the worktree's top, outside the workspace; Root where the
	// thread works in it.
	Path string `msgpack:"path,omitempty" json:"path,omitempty"`
	Root string `msgpack:"root,omitempty" json:"root,omitempty"`
	// Branch is the tree's branch; Base the commit it began from (the
	// workspace as it was, uncommitted files included).
	Branch string `msgpack:"branch,omitempty" json:"branch,omitempty"`
	Base   string `msgpack:"base,omitempty" json:"base,omitempty"`
	// GitDir is the worktree's own git directory (in the repository's),
	// named when it is finished rather than found through its .git file.
	GitDir string `msgpack:"git_dir,omitempty" json:"git_dir,omitempty"`
}

// WorktreeResult is what a thread that worked in its own worktree left
// there, as its end records it: the branch that holds it, the files it
// changed, and the worktree when it was kept (the thread failed).
type WorktreeResult struct {
	Branch string `msgpack:"branch,omitempty" json:"branch,omitempty"`
	Base   string `msgpack:"base,omitempty" json:"base,omitempty"`
	Head   string `msgpack:"head,omitempty" json:"head,omitempty"`
	// Changed are the files the branch changes since Base.
	Changed []string `msgpack:"changed,omitempty" json:"changed,omitempty"`
	// Kept is the worktree's path when it was kept; "" when removed.
	Kept string `msgpack:"kept,omitempty" json:"kept,omitempty"`
	// Error says why the worktree could not be finished (its branch
	// then holds only what was committed before).
	Error string `msgpack:"error,omitempty" json:"error,omitempty"`
	// Offered: the thread's end offers a person the merge of its branch
	// into the workspace — the thread ended done, its branch changes
	// something, and its configuration asks (WorktreeMergeAsk). The
	// scheduler folds it as a call of MergeTool with this branch, base
	// and head, which waits for a person's approval as any write does
	// (see scheduler's offer.go); approved, the change is applied to the
	// workspace, denied, the branch keeps it. false in logs written
	// before ends offered anything.
	Offered bool `msgpack:"offered,omitempty" json:"offered,omitempty"`
}

// The merge modes of a thread working in a worktree of its own
// (SystemConfigured.WorktreeMerge): what its end does with its branch.
const (
	// WorktreeMergeAsk (the default, ""): the end offers a person the
	// merge of the branch into the workspace (WorktreeResult.Offered).
	WorktreeMergeAsk = "ask"
	// WorktreeMergeBranch: the end leaves the change on the branch,
	// named on worktree.finished, and offers nothing.
	WorktreeMergeBranch = "branch"
)

// The worktree modes of a thread's configuration (SystemConfigured.Worktrees).
const (
	// WorktreesParallel (the default, ""): children delegated in parallel
	// (two or more delegations in one turn) each work in a worktree.
	WorktreesParallel = "parallel"
	// WorktreesAlways: every child works in a worktree.
	WorktreesAlways = "always"
	// WorktreesOff: children work in the workspace itself.
	WorktreesOff = "off"
)

// KindWorktreeFinished: a thread that worked in a worktree of its own
// (SystemConfigured.Worktree: a worker's root thread) ended, done,
// failed or stopped, and what it left there was committed to its branch
// (WorktreeResult): the worktree removed, or kept and named when the
// thread did not end done. Posted by the runtime from outside the fold
// (its key is WorktreeFinishedKey of the seq it finished at); a thread
// taken up again after it (a new message) ends again with another.
const KindWorktreeFinished Kind = "worktree.finished"

// WorktreeFinishedKey is the ingress key of the worktree.finished of a
// thread whose log ended at seq when it was finished.
func WorktreeFinishedKey(seq uint64) string { return fmt.Sprintf("worktree-finished/%d", seq) }

func init() { register[WorktreeResult](KindWorktreeFinished) }

// Validate requires an offered merge to name its branch, base and head.
func (p WorktreeResult) Validate() error {
	if p.Offered && (p.Branch == "" || p.Base == "" || p.Head == "" || len(p.Changed) == 0 || p.Error != "") {
		return fmt.Errorf("an offered merge names its branch, base, head and changed files, and is of a worktree finished without error")
	}
	return nil
}
