// Package search finds facts across every thread of a store: by field
// (kind:, tool:, path:, by:, effect:, check:, model:, thread:, since:,
// until:) and by the words of messages, arguments, command output and
// answers (Parse), newest first, a page at a time (Index.Search).
//
// The index is an inverted index in a Pebble database of its own, beside
// the store (Open): for each term, the facts that have it, newest first.
// It is derived data, never a record: Index.Update brings it up to date
// from the last seq it indexed of each thread (a thread's head says
// whether anything is new, so an up-to-date thread costs one comparison),
// and Index.Reindex builds it again from the logs. A hit is never trusted
// to the index: before Search gives it, the fact is read from the log,
// its hash compared with the hash the index recorded, and the query
// matched again against what the log says (the fact and the facts of its
// tool call that gave it its fields). A hit the log does not confirm —
// an index out of date, damaged or written by someone else — is dropped
// and counted (Page.Dropped), never shown.
//
// # Key layout of the index database
//
//	'v'                                  the layout version (1 byte)
//	'w' thread                           watermark: seq (8, big-endian), hash (32)
//	'x' thread 0x00 name                 what the indexer carries along a thread:
//	                                     "m" its model, "c"+call the fields of a
//	                                     tool call, "r"+request, "a"+action and
//	                                     "t"+model call id the call they name
//	's' thread                           a status hint (SetStatusHint): the head's
//	                                     seq (8), its hash (32), the status
//	'p' term 0x00 ^at thread 0x00 ^seq   a posting: the fact's hash (32) and the
//	                                     seqs of the facts that gave it fields
//	                                     (uvarint count, then uvarints)
//
// ^at is the complement of the fact's time (Unix nanoseconds) and ^seq of
// its seq, both big-endian, so a term's postings run newest first; terms
// never hold 0x00. A posting and the watermark that covers it are written
// in one batch, so a crash leaves the index behind the log, never ahead.
//
// A Follower keeps an index up to date with a store other processes append
// to (a NATS store: told of each append by the stream).
package search
