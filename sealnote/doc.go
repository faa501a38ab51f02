// Package sealnote keeps seals (package seal) as git notes: where the
// workspace is a git repository and the person opts in (seal_git_notes in their own settings file, or harness
// seal --git-note), each seal is also written as a line of a git note on
// the commit the workspace's HEAD names, under Ref, so that it
// travels with the repository (git push origin refs/notes/harness-seals)
// and whoever verifies the thread elsewhere finds it. replay --verify
// reads the seals of that ref as it reads witness logs: a seal checks by
// its signature and key, wherever it was found.
//
// The repository is untrusted input. git runs through package safegit
// (no hook, filter, fsmonitor, pager or transport runs), the note is
// written with plumbing (a private index, commit-tree, update-ref
// --no-deref with the old value), so that a notes ref planted as a
// symbolic ref to a branch is refused and never moves the branch; and the
// ref is read with bounds (MaxNotes notes, each at most
// MaxNoteBytes), so that a huge planted ref costs a bounded read.
package sealnote
