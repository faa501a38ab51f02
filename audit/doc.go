// Package audit tells a thread's record back and checks it. Replay folds
// a log and puts, for every action, the worker's report, the runtime's
// observation, the effect state and the declared check side by side;
// Effects lists every action of a store with its effect state, open ones
// first; VerifyLog and VerifyFacts check that a log is one the runtime
// could have written: the hash chain, every caused fact enabled by the
// fold where it stands (the first transition enabled: a runtime always
// runs that one), every posted fact accepted there, the lifecycle of
// every call and action (a completion after its start, a declared check
// recorded with it, nothing completed after it was found in doubt), and
// the thread's first fact its message (or, for a child, its spawn record
// and then its task). In a tree of threads VerifyLog checks the links both
// ways too — each spawn has its child, each report names its child's final
// head — and verifies the children; ReplayTree tells a thread and its
// children. A Verifier checks a log fact by fact and is kept; a Follower
// keeps a thread's verdict up to date as the log grows, reading only the
// new facts (the page's verdict).
//
// Everything here reads the thread's one view (harness.View): the rules
// that decide what a thread does next are the rules the audit applies.
package audit
