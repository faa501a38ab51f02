// Package worker drives the runnable threads of a store that many
// processes share — on one machine or many — each thread held by one
// worker at a time under its lease, none of them asked by a person: a
// thread that needs an answer parks, costs nothing while it waits, and is
// taken up again when the answer comes.
//
// # Which threads, and how a worker learns of them
//
// A thread is runnable when it was started, answered (a confirmation, a
// question, a reconciliation), or handed over: its holder died, or drained
// before its next step. A worker learns of them from a Queue: one job per
// append, each given to one worker of all those that take from the
// queue, and given out again if that worker stops answering for it. On
// NATS the queue is the store's log itself (natsstore.Store.Work, through
// FromWork): a durable consumer of every thread's subject, delivering each
// record's headers, so it cannot miss an append nor hold one the log does
// not. So:
//
//   - A job for an append a runtime made while it held the thread (a model
//     turn, an action's record) is finished at once: the holder goes on by
//     itself.
//   - A job for an ingress append given out for the first time, when the
//     thread has appended since (Job.Followed: one get), is finished too:
//     the runtime that appended after it had folded it (it appends only
//     after the head it has folded) and went on from it — the answers a
//     worker's own policy posts are such jobs. That runtime, if a
//     worker's, holds the thread under a job of its own that is given out
//     again should it die.
//   - Any other job for an ingress append (a start, an answer, a
//     reconciliation) may make the thread runnable: the worker takes the
//     thread's lease
//     (harness.Hold, waiting at most Options.LeaseWait), drives it with
//     package drive until it is done, parked, failed or stopped, and only
//     then finishes the job. While it drives, it says every
//     Queue.KeepEvery that the job is still being worked on. Jobs for the
//     same thread that come meanwhile join the drive, which looks once
//     more before it finishes them.
//   - A thread another holds is put off: the job goes back to the queue and
//     comes out again after Options.Retry (longer each time). The holder
//     may be alive (an answer came while it drove the thread: the next
//     look finds the thread parked or done, or goes on), or dead.
//   - A worker that dies keeps its jobs until the queue's ack wait runs
//     out (natsstore.WithAckWait), and its leases until their TTL runs out
//     (natsstore.WithLeaseTTL); then its jobs are given to the others. The
//     worker that takes one holds the thread, finds the action that was
//     running with no end — in doubt, now that its holder is gone — records
//     it as interrupted without running it again, and parks the thread on
//     reconcile. An action is never in doubt while the lease of the worker
//     running it holds, and never runs twice: its start was recorded, under
//     the lease, before the tool ran.
//
// A parked thread has no job and no timer: it costs the workers nothing
// until the answer's append makes one. A worker's cost is one small
// message per append made by anyone (a job, finished at once for most),
// and one look — the lease, the log read through, the fold — per start
// or answer that no runtime went on from.
//
// A child thread (one the delegate tool spawned; its first fact is a
// thread.spawned) runs only as its parent drives it: a job for a child's
// append is worked on as a job of the root of its tree (its parent's
// parent, and so on: one read of a first fact per step), whose drive
// drives the children it waits on. So an answer given through a parent,
// which lands in the child's log, wakes the whole tree.
//
// A thread a person drives (harness run, resume) is that process's: the
// runtime appends right after the start or the answer, so the workers
// leave it alone; should that process die, the thread waits for its next
// answer, or a person's resume.
//
// # Drive
//
// Each thread is driven by drive.Drive on a runtime of its own (the
// services Options.Services makes for it), under the thread's own
// approval policy — its latest policy.set (harness run's, submit's, a
// person's "always for this thread"), read at each look, with what
// Options.AmendPolicy adds — or, on a thread that records none, under
// Options.Approval; and no Ask: what the policy leaves to a person parks
// the thread. A worker thus decides as harness resume with the same flags
// would (the flags change the thread's policy: --approve replaces its
// mode, --allow and --deny add patterns), but records no change: the
// flags are the worker's, not the thread's. The model is loaded only when a turn is due,
// from the model the thread recorded, or what Options.LoadModel chooses.
// A worker does not run a failed model turn again: a person resumes a
// failed thread.
//
// # Drain
//
// Run drains when its context ends (the command: on SIGTERM or an
// interrupt): it takes no more jobs (the request for jobs in progress runs
// out first, at most Options.Poll), and each drive stops before its next
// Resume or model turn — a tool that is running runs to its end and its
// record lands — releases the lease and gives the job back at once, so
// another worker goes on with the thread without waiting for a lease to
// run out. What has not stopped within Options.Drain is interrupted.
//
// # Workspaces
//
// A worker drives each thread in the workspace its services name: where
// the worker runs. Workers that share a store should work in the same
// workspace (a directory they share, or the same checkout on each
// machine), since a thread moves from worker to worker and its commands act
// where the worker driving it is. A worker's runtimes may give each thread
// a git worktree of its own (harness.Config.OwnWorktree; harness worker
// does in a git repository): the threads it drives at once then never
// share a directory. Otherwise they share its workspace, and the
// observation of one action names the changes other threads' actions
// made (action.Ledger).
package worker
