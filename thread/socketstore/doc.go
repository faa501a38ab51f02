// Package socketstore serves a thread.Store to the other processes of one
// machine over a Unix socket, so that one process can hold a store that
// opens in one process at a time (the Pebble store's directory lock) while
// every other process of the workspace reads and appends through it.
//
// The process that holds the store listens (Listen, then Server.Serve)
// on the socket of the store's directory (Path, in the store's runtime
// directory, RunDir); any other process dials it (Dial) and gets a *Client, a thread.Store that does what the held
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
// store, the Client is a thread.Leaser: Lease asks the server to hold
// the thread on the client's behalf, in the server's process, with the
// function the server was made with (HoldFunc: harness.Hold, in a
// harness server), where every client's hold and the server's own meet
// in one lock. The hold lasts while the lease's connection is open: a client
// that releases, or dies, lets go; a server that goes away ends the
// lease's context with thread.ErrLeaseLost. Two clients resuming one
// thread therefore never both act, and harness.Free, asked by any of
// them, tells an action in progress from one left in doubt.
//
// # Who may connect
//
// The socket is not in the store's directory, which may lie in a
// workspace that another workspace's sandboxed command can read, but in
// the store's runtime directory: a directory of mode 0700, named after
// the digest of the store's resolved path, in the user's harness runtime
// directory (sandbox.RuntimeDir: /run/user/<uid>/harness, else
// /tmp/harness-<uid>; never moved by $XDG_RUNTIME_DIR or $TMPDIR, so a
// server and its clients agree on it whatever environment each sees),
// which every sandbox hides.
// The socket's mode is 0600: only the user who runs the server (and root)
// can open it. On Linux each side also reads the other's credentials
// (SO_PEERCRED, and a pidfd, SO_PEERPIDFD, where the kernel has one, so
// that a pid reused meanwhile is not taken for the peer) and refuses
// another user, and a process of another user namespace: the sandbox
// runs every command in a user namespace of its own, so a sandboxed
// command that reached a socket would be refused all the same.
//
// # Protocol
//
// Each call is one request and its responses, msgpack values written
// back to back on a connection; facts travel in their storage encoding
// (facts.Encode, checksummed), so what a client reads is byte for byte
// what the store holds. Connections are kept and reused; a lease has a
// connection of its own for as long as it is held. A client may also hand
// the server ephemeral progress records of the threads its process holds
// (Client.Progress, WithProgress): never stored, never waited for.
package socketstore
