// Package harness is the runtime of event-sourced coding actors, and the
// parts a coding harness is composed of.
//
// A [Runtime] resumes a thread: it streams the thread's log through the
// actor's components (package fold), then repeats — project the enabled
// transitions; if none, return the outcome (done, or parked waiting for a
// person, with the requests awaited); otherwise run the first with
// effect.Run, append the facts it returns with its key as their cause and
// the head it folded as the expected head, fold them, and go on. A key that
// is already a cause never runs again, so resuming twice, racing runtimes
// and retried posts are all harmless. A wait for a person is a view that
// enables nothing: no timer runs while a thread is parked.
//
// How a transition ends decides what is recorded: a success appends its
// facts; a Fail appends transition.failed with the error's class, and the
// view decides what next; a Die appends transition.failed marked as a
// defect and stops the thread; an Interrupt appends nothing and leaves the
// thread resumable — but for an action whose adapter the cancellation
// stopped, which is recorded as action.interrupted with what the runtime
// observed (see Runtime.Resume).
//
// A [Thread] keeps a thread's fold between calls, so that a front end
// that looks at a thread, answers it and resumes it, turn after turn,
// reads its log once. Where a Resume leaves a thread, its fold is kept as
// a snapshot on a store that keeps them (thread.Snapshots, as the Pebble
// store does): a Thread that reads the thread anew — the next process —
// starts from the latest snapshot that fits (its hash is the log's at its
// seq, and every part is of this version) and folds only the facts after
// it; anything else folds the log from its first fact. Its [View] is the one reading of the thread that
// every front end, the verifier and undo use: what waits, what would run
// next, and the coding scheduler's reading of every request and action.
// A thread is acted on by one holder at a time ([Hold]: this process's
// lock, and on a store processes share its lease); [Free] says whether
// anyone holds it, which is what tells a running action from one in doubt.
//
// An actor is composed of parts ([Compose]): [System] records what the
// model is told, [Tools] declares the tools and which need confirmation,
// [Budget] bounds turns and tokens, [Compact] summarizes a long context
// (by the model, in a compaction turn, when its window is configured),
// and [Infer] runs the coding scheduler's model turns. [CodingActor] is the
// stock tree of all five; [DelegatingActor] adds [Delegate].
//
// An actor spawns actors: with a [Delegate] part, the model's delegate
// tool spawns a child thread for a task — its own log, its tools (some of
// the parent's), its budget (no more than the parent has left) and its
// actor, composed by the Go caller from what the delegation gives it
// ([Child]). The parent waits on the child as it waits for a person; a
// Resume of the parent drives the children it waits on, and each child's
// outcome arrives in the parent as an ingress fact whose key is derived
// from the child's id and final head, so that a crash anywhere leaves one
// child and one report. [Thread.Tree] reads a parent and its children,
// [Runtime.Open] and [Thread.Open] give a child thread with its own actor,
// and [Thread.Stop] stops a thread and the children it waits on (see
// tree.go for the whole protocol).
//
// Taking a thread on for a person is package drive's; auditing it,
// package audit's; undoing it, package rewind's; the stock harness of a
// directory (its store, settings, built-in tools and models), package
// stock's. This package links no model provider and no distributed store.
package harness
