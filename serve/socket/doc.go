// Package socket serves a thread.Store to the other processes of one
// machine over a Unix socket, so that one process can hold a store that
// opens in one process at a time (the Pebble store's directory lock) while
// every other process of the workspace reads and appends through it.
//
// The process that holds the store listens (Listen, then Server.Serve)
// on the socket of the store's directory (Path); any other process dials
// it (Dial) and gets a *Client, a thread.Store that does what the held
// store does: the same appends with the same expected-head checks, the
// same reads, the same errors (a *thread.ConflictError carries the actual
// head, a *thread.DuplicateCauseError its seq), and the held store's
// content-addressed blobs and meta space (action.Blobs, action.Meta).
//
// # Who may act on a thread
//
// Within one process, harness.Hold keeps two runtimes from acting on one
// thread at once, and a started action with no completion seen by the
// holder is one whose process died. Across the processes of a served
// store, the Client is a thread.Leaser: Lease asks the server to
// harness.Hold the thread on the client's behalf, in the server's
// process, where every client's hold and the server's own meet in one
// lock. The hold lasts while the lease's connection is open: a client
// that releases, or dies, lets go; a server that goes away ends the
// lease's context with thread.ErrLeaseLost. Two clients resuming one
// thread therefore never both act, and harness.Free, asked by any of
// them, tells an action in progress from one left in doubt.
//
// # Who may connect
//
// The socket is created with mode 0600 in the store's directory: only
// the user who runs the server (and root) can open it. On Linux the
// server also reads the peer's credentials and refuses any other user.
//
// # Protocol
//
// Each call is one request and its responses, msgpack values written
// back to back on a connection; facts travel in their storage encoding
// (facts.Encode, checksummed), so what a client reads is byte for byte
// what the store holds. Connections are kept and reused; a lease has a
// connection of its own for as long as it is held.
package socket
