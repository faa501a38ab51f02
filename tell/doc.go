// Package tell renders what the front-end API returns — a thread's audit
// and its tree, the effects of a store, an undo plan, one step of a
// thread, the list of threads — as text for a terminal, and gives the
// JSON documents the command line prints of them. Every string that comes
// from a log goes through present's escaping first. A front end writes
// what tell returns; it decides nothing itself. At a terminal it also
// asks (Asker): what a reply means is drive's, and the answer is posted
// through stock and drive as every front end's is.
//
// tell sits beside the front ends, above everything it renders (drive,
// audit, rewind, seal, stock, rerun, mcp, worker, demo) and above present,
// whose escaping it uses, and present/ask, whose prompter it asks with;
// only the command line imports it. (It was
// present/tell: under present it was an arrow running up the table.)
package tell
