// Package scheduler is the coding scheduler: the component that folds a
// coding thread into its phase — infer, confirm, question, tool, done — and
// enables the next step.
//
// A thread goes:
//
//	user.message → model.turn (text)                                   → done
//	user.message → model.turn (tool calls) → confirmation.requested    → parked
//	    confirmation.answered (approved) → action.requested → action.completed
//	    → model.turn …
//	    confirmation.answered (denied, then continue) → model.turn …   (the model is told)
//	    confirmation.answered (denied, then stop)                      → done
//	        (the turn's other calls that have not started are completed unrun)
//	user.message → model.turn (question) → question.asked              → parked
//	    question.answered → model.turn (the answer is in its request) …
//
// A denial recorded before denials said what follows them (no then) folds
// as it did: a turn whose every call was denied is done.
//
// A call may also be a delegation (Env.Delegate): its spawn transition
// records child.spawned, and the thread waits on the child (a wait of kind
// fold.WaitChild) until child.reported arrives, which the model is shown
// as the call's result (see delegate.go).
//
// While parked the scheduler enables nothing: the thread waits for an answer
// fact, with no timer anywhere. Answers name the request they answer; each
// tool call of a model turn is its own request. An approval binds what runs:
// the confirmation request carries a digest of the tool and its exact
// arguments, and the tool runs with the arguments that were approved.
//
// The scheduler keeps snapshots (see fold.Snapshotter): what it holds to
// say what is enabled, and where the compacted conversation starts, so
// that a scheduler restored from one answers as the fold of the whole log
// would, reading the facts before it only when the whole log is asked for.
//
// The scheduler decides what happens next; it does not know how. The
// effects that take a model turn and run a tool come from its [Env], which
// the harness fills in with real services.
package scheduler
