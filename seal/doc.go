// Package seal keeps sealed heads: a person's signature on where a
// thread's log stood, kept where the store's writer cannot rewrite it.
//
// The hash chain of a log (package facts) catches an edit, a deletion and
// a reordering, but not a whole rewrite: whoever can write the store can
// change a fact and recompute every later hash. Nor a cut tail: drop the
// last facts and what is left still links. A seal closes both. Each person
// has an ed25519 [Key], made on first use in their own configuration
// directory (never in a workspace or a store); a [Sealer] signs a thread's
// head — its id, seq and hash, the hash of its first fact, and the store
// it lives in — and appends the signed [Entry] to a [Witness] log beside
// the key. The witness log is itself hash-chained (each entry names the
// hash of the line before) and only ever appended to, under a lock, with
// each line synced before the seal is acknowledged.
//
// [Check] reads a thread's log against every seal of it found in witness
// logs: a seal whose seq is past the log's end (a cut tail), or whose seq
// holds a fact of another hash (a rewrite, or a history forked after it),
// fails and is named — its seq, when it was made, by which key. A seal is
// trusted only by its key: the person's own, or one they name; a seal by
// any other key is reported and proves nothing; a signature that does not
// verify fails.
//
// What a seal cannot do: a person who holds the key can seal anything, and
// someone who can rewrite the person's configuration directory can rewrite
// the witness log with it. Anchoring the witness log's latest entry
// somewhere else — a transparency log, a colleague's witness — is where
// that ends; this package leaves it to the caller, through the Sealer's
// Anchor hook (nothing fills it in yet).
package seal
