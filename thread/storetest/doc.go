// Package storetest is the conformance suite for thread.Store: what every
// store must do, as tests. A store's own test calls Run:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Opener{Open: ..., Reopen: ...})
//	}
//
// The suite uses real stores and real concurrency. It covers appends and
// reads, optimistic concurrency with many writers on one thread, duplicate
// causes, reads from any seq, chain verification, persistence across a
// reopen, a 1 MiB payload, refused input (an empty append, bad thread ids,
// invalid drafts), cancelled contexts and a closed store.
package storetest
