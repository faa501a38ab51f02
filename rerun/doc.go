// Package rerun re-runs a recorded thread against another model (or
// another prompt, or other tools) and says where it diverges, what it
// would have done, and what it costs.
//
// A rerun is a new thread: a fork of the original's first message whose
// thread.forked records the rerun (facts.Rerun: the model spec, the
// overrides and their digest, the key). The runtime that drives it has a
// Rerunner in its services (harness.Rerunner): after each model turn the
// turn's calls are compared with the original's same turn — the same
// tools, the same arguments as canonical JSON, in the same order — and
// the verdict is recorded (rerun.turn). While the calls match, each is
// served the original's recorded result: its request names the
// original's action.completed by seq, and its completion is a copy of
// it; nothing runs, nobody is asked, no hook runs. What came from outside
// after a matched turn of the original — the answer to the same question,
// a person's next message — is offered after the rerun's same turn (the
// rerun.turn's Offers), each a copy naming the original's seq, appended
// by the transition that would otherwise wait for the answer or take the
// next turn. At the first divergence the rerun stops, or, live, goes on
// for real in a scratch copy of the workspace with the original's file
// effects undone back to the point of divergence — never in the person's
// workspace. The copy is recorded: a live rerun cut off midway goes on
// there, and nowhere else (ScratchOf, ErrScratch).
//
// Until the divergence each turn is given the instruction files the
// original's same turn was given, from their kept blobs, not the files as
// they are now.
//
// Overrides (Options.Overrides, Instructions, Tools, WithoutTools) are
// recorded on thread.forked and digested into the key; a tools override
// narrows the tools the original was offered, never widens them
// (ErrOverride). Again reads them back to go on with a rerun as it was
// begun (a plain resume of a rerun).
//
// The original is never written. The rerun is a thread like any other:
// it folds, verifies and can be searched, and it can be rerun itself.
//
// Compare puts the two side by side (Report); Suite reruns many threads,
// once per (thread, key), so that a suite stopped midway and run again
// reruns none twice.
package rerun
