// Package helper is the sandbox's helper: the first process of a
// command's new namespaces, which builds the command's view of the file
// system and its network, enters the Landlock domain, drops every
// capability and starts sh -c, then reaps what is left to it as an init
// does (see package sandbox, "How (Linux)").
//
// It runs in one of two programs: a small one of its own
// (harness-sandbox, which imports little beside this package, so it
// starts in a fraction of the harness's time), or the harness itself,
// re-executed, for programs that have no harness-sandbox beside them.
// Both call RunIfAsked before anything else. It imports nothing of the
// harness: what it is told arrives resolved, over a pipe.
package helper
