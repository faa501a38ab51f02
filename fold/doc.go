// Package fold turns a thread's log into the transitions it enables next.
//
// A [Component] folds facts one at a time ([Component.Step]) into a view,
// and says what that view enables ([Component.Output]): transitions to run,
// people to wait for, or an end. A [Fold] steps every component of an actor
// through the same log, keeps the causes already used, and projects the
// union of the components' outputs: the enabled transitions in a
// deterministic order (components in the order given, each in its own
// order), minus every key already used as a cause. Two components enabling
// the same key is an error, [ErrDuplicateTransition], reported before any
// effect runs.
//
// Folding is pure: a component reads only the facts it is given — never a
// clock, randomness or the iteration order of a map — so the same log always
// projects the same transitions, in this process or the next.
//
// A fold can be kept as a snapshot ([Fold.Snapshot]) when every component
// opts in ([Snapshotter]): its state after one fact, encoded
// deterministically, so that a later fold of the thread starts there
// ([Restore]) and steps only the facts after it. A restored fold asks a
// [CauseIndex] (the store's) about the causes before the snapshot, and a
// component that needs those facts again reads them through its [Prefix]
// — only then. The same log gives the same snapshot however it was
// folded, which is what lets a verifier check one.
package fold
