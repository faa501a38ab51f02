package worktree

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of this package, matched with errors.Is.
var (
	// ErrNotRepository: the workspace is not inside a git repository
	// with a commit, so there is nothing to make a worktree of.
	ErrNotRepository = errors.New("not a git repository with a commit")
	// ErrConflict: the branch's change does not apply to the workspace as
	// it is now; nothing was changed, and the branch is kept.
	ErrConflict = errors.New("the change conflicts with the workspace")
	// ErrInside: the directory for worktrees is inside the workspace,
	// where the workspace's own threads would see and observe them.
	ErrInside = errors.New("worktrees inside the workspace")
	// ErrBranch: a branch is not one this package made (see Branch), or
	// its base is not its ancestor.
	ErrBranch = errors.New("not a thread's branch")

	// ErrMoved: the branch's head is not the commit the caller named
	// (the one a person was shown): it moved since, and nothing is
	// applied.
	ErrMoved = errors.New("the branch moved since its change was shown")

	// ErrProtected: a branch's change touches a path the file tools never
	// write — the harness's own (.harness) or git's (.git) at any depth —
	// or one outside the workspace (a workspace below its repository's
	// top): nothing is applied.
	ErrProtected = errors.New("the change touches a path the workspace's tools may not write")
)

// ConflictError is Apply's ErrConflict: the branch's change does not
// apply to the workspace as it is now. Paths are the files git named as
// not applying (relative to the repository's top, sorted; empty when it
// named none of the branch's); nothing was applied.
type ConflictError struct {
	Branch string
	Paths  []string
	// Err is what git said.
	Err error
}

func (e *ConflictError) Error() string {
	where := "the workspace"
	if len(e.Paths) > 0 {
		where += " in " + strings.Join(e.Paths, ", ")
	}
	return fmt.Sprintf("%s: %s conflicts with %s (%v)", ErrConflict, e.Branch, where, e.Err)
}

// Is makes a ConflictError match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Unwrap is what git said.
func (e *ConflictError) Unwrap() error { return e.Err }
