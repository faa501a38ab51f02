// Package thread keeps threads: durable, append-only logs of facts, one per
// conversation or task.
//
// A Store appends optimistically. Append(ctx, thread, after, drafts...)
// succeeds only if the thread's head is still at seq after, so two writers
// racing on one thread cannot both win: the loser gets a *ConflictError with
// the actual head, folds the facts it missed and decides again. A cause
// already in the thread is refused with ErrDuplicateCause, which makes a
// retried ingress post or a second worker running the same transition
// harmless. An acknowledged append survives a crash. Nothing updates or
// deletes a fact.
//
// Read yields facts that are the caller's own. Scan calls a function with
// each fact instead, lending the payload for the call only, which spares a
// reader that looks at payloads only while it reads (a verifier hashing, a
// fold that keeps decoded values) a copy of every one; it falls back to
// Read for a store that cannot lend (see Scanner).
//
// OpenPebble opens the embedded store; package storetest is the conformance
// suite every Store passes, so another backend (NATS JetStream, with a
// subject per thread and expected-sequence publishes) can prove itself the
// same way.
//
// # Pebble layout
//
// Every key starts with one byte naming its table. A thread id never contains
// 0x00 (see ValidateID), so the 0x00 after an id ends it: one thread's keys
// are never a prefix of another's, and "a" sorts before "a.b".
//
//	'f' id 0x00 seq        fact record: facts.Encode of the fact, seq as
//	                       8 bytes big-endian so keys sort in seq order
//	'h' id                 head record of the thread (below)
//	'b' sha256             blob: content kept by its 32-byte digest, shared
//	                       by every thread (see PutBlob)
//	'c' id 0x00 cause      cause index: seq of the first fact with that
//	                       cause, 8 bytes big-endian
//	'k' ns 0x00 key        meta: a value the runtime keeps beside the
//	                       threads and may lose (the workspace observer's
//	                       stat cache, namespace "observe.v1", keyed by
//	                       workspace root and directory); never a fact,
//	                       checked by whoever reads it (see PutMeta)
//	's' id 0x00 seq        snapshot: a fold's views of the thread after
//	                       the fact at seq (8 bytes big-endian), the
//	                       newest KeptSnapshots of each thread (below)
//	'm' "schema"           layout version of the store, one byte (1)
//
// A head record, version 1, is: a version byte (1); seq, uvarint; the last
// fact's hash, 32 bytes; its kind, uvarint length then bytes; its time, int64
// big-endian UTC Unix nanoseconds; and a CRC-32C of all that, 4 bytes
// little-endian. It is what Head and Threads read, so they never touch a
// fact. Threads lists the 'h' table in key order, which is id byte order.
//
// A snapshot record, version 1, is: a version byte (1); the hash of the
// fact at seq, 32 bytes; the fold's encoding of its views (package fold
// writes and reads it; the store does not); and a CRC-32C, 4 bytes
// little-endian, of the seq as 8 bytes big-endian followed by everything
// before the checksum — so a record copied under another seq reads as
// damaged. A snapshot is not a fact and not synced on its own: it may be
// lost, and a reader checks its hash against the log (see Snapshots).
//
// The invariants these keys keep, and the code that keeps them, are with
// PebbleStore.Append; PebbleStore.Verify checks them.
package thread
