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
package fold
