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
// thread resumable.
//
// An actor is composed of parts ([Compose]): [System] records what the
// model is told, [Tools] declares the tools and which need confirmation,
// [Budget] bounds turns and tokens, [Compact] summarizes a long context,
// and [Infer] runs the coding scheduler's model turns. [CodingActor] is the
// stock tree of all five.
package harness
