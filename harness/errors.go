package harness

import "errors"

// The errors of the runtime, wrapped with the thread or call they concern;
// check them with errors.Is.
var (
	// ErrDefect: a transition died (panicked, or returned an error marked
	// as a defect). The defect is recorded in the thread and the thread
	// stops.
	ErrDefect = errors.New("transition died")

	// ErrStopRequested is the cause of the context of a transition cut
	// off because a stop of its thread was asked for (stop.requested, or
	// thread.stopped, appended while it ran); see Thread.Stop.
	ErrStopRequested = errors.New("a stop of the thread was asked for")

	// ErrNotAsked: an action.Elicit of a question no running action may
	// put (not an elicitation, or of another action than the one running).
	ErrNotAsked = errors.New("the question may not be put here")

	// ErrSampleRefused: an action.Sample the runtime does not run — the
	// thread's budget cannot cover it, the action asked too often, or
	// another action than the one running asked.
	ErrSampleRefused = errors.New("the sampling turn is refused")

	// ErrNotServed: a rerun's call is to be served a recorded result, but
	// the services serve none (they are no rerun's: see Rerunner).
	ErrNotServed = errors.New("no recorded results are served here")

	// ErrThreadExists: a thread that must be new already has facts.
	ErrThreadExists = errors.New("thread already exists")

	// ErrPartialPost: a Post of several facts in one append, one of
	// which (not the first) is in the log already without the first.
	ErrPartialPost = errors.New("part of the facts posted together is in the log already")

	// ErrUnknownThread: a Resume or Post of a thread with no facts.
	ErrUnknownThread = errors.New("unknown thread")

	// ErrNotIngress: Post of a kind that only the runtime appends.
	ErrNotIngress = errors.New("not a kind that can be posted")

	// ErrUnknownAgent: a delegation names an agent there is no file of.
	ErrUnknownAgent = errors.New("no such agent")
	// ErrNoAgentModels: a child's agent file names a model, and the
	// runtime's services load no other model (Services.Models is nil).
	ErrNoAgentModels = errors.New("this runtime loads no model but its own (Services.Models is not set)")

	// ErrChildPolicy: the actor composed for a child is wider than its
	// parent allows — other tools, a grant the parent lacks, a larger
	// budget — or was not made by Compose.
	ErrChildPolicy = errors.New("the child's actor is wider than its parent allows")

	// ErrNoPlan: a person acting on a plan the thread does not wait on
	// (see plan mode).
	ErrNoPlan = errors.New("no such plan")
	// ErrHookNotInForce: a hook the thread records is not in force now —
	// its settings changed, or are no longer trusted — so it is not run
	// (HookRunner); its run is recorded as failed.
	ErrHookNotInForce = errors.New("the hook is not in force (its settings file changed, or is no longer trusted: trust it again, or start a new thread)")

	// ErrNotRoot: a tree's budget set or raised on a child thread; it is
	// the root thread's (see treebudget.go).
	ErrNotRoot = errors.New("not the root of its tree")

	// ErrNotInTree: a thread named as a descendant of another is not one.
	ErrNotInTree = errors.New("not a thread of the tree")

	// ErrNotChild: a child thread's id is taken by a thread that is not
	// the child of the spawn that names it, or a thread claims a parent
	// whose log does not record its spawn.
	ErrNotChild = errors.New("not the child its spawn names")

	// ErrChildShaped: a new thread that is no child would take an id
	// shaped like a child's (PARENT.CALL, see thread.ChildID): a thread
	// PARENT that later delegates that call could not create its child.
	ErrChildShaped = errors.New("a child's id")

	// ErrNotItsSnapshot: the snapshot a thread would resume from is not
	// of its log — the fact at its seq has another hash, the log ends
	// before it, or a fact after it does not link to it. The store or the
	// snapshot was changed since it was kept; the error wraps a
	// *thread.CorruptError naming the seq, and nothing resumes.
	ErrNotItsSnapshot = errors.New("the log is not the one its snapshot was made of")

	// ErrNoWorktrees: a thread works in a worktree of its own (its
	// system.configured records one), and the runtime that would run it
	// makes none (Services.Worktrees is nil): nothing of it runs in the
	// workspace instead.
	ErrNoWorktrees = errors.New("the thread works in a worktree of its own, and this runtime has no worktrees")

	// ErrNotItsWorktree: the worktree a thread's configuration records
	// is another thread's (the thread is a fork of one that worked in its
	// own): it does not run there, nor in the workspace.
	ErrNotItsWorktree = errors.New("the worktree the thread records is another thread's (a fork): start a new thread")

	// ErrNoComponent: ViewAs names a component the thread's actor does
	// not have.
	ErrNoComponent = errors.New("no component of that name")
	// ErrViewType: ViewAs asks for a view of another type than the
	// component's.
	ErrViewType = errors.New("the view is of another type")
)
