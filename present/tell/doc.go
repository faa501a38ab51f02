// Package tell renders what the front-end API returns — a thread's audit
// and its tree, the effects of a store, an undo plan, one step of a
// thread, the list of threads — as text for a terminal, and gives the
// JSON documents the command line prints of them. Every string that comes
// from a log goes through present's escaping first. A front end writes
// what tell returns; it decides nothing itself.
//
// tell sits above present (which imports only facts): it may import
// drive, audit, rewind and seal, whose results it renders.
package tell
