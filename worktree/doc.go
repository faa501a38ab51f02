// Package worktree gives a thread a git worktree of its own: a checkout of
// the workspace as it is when the thread begins (uncommitted and untracked
// files too), on a branch of its own, in a directory outside the
// workspace. Threads that run at once then never see, or blame each other
// for, each other's changes.
//
// Create makes one; Finish commits what the thread left in it to its
// branch and removes it (or keeps it, when the thread failed); Diff is
// what the branch changed; Apply brings that change into the workspace —
// all of it, or nothing and ErrConflict saying where. Every git call goes
// through safegit: the repository is untrusted input, and nothing its
// config names (hooks, fsmonitor, filters, merge drivers) runs.
package worktree
