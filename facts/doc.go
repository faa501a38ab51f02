// Package facts is the vocabulary of harness: the Fact, the record of one
// thing that happened in a thread, and everything needed to write it down and
// read it back.
//
// A fact is immutable. It names its thread, its position (Seq, from 1 with no
// gaps), its Kind, its Cause (the key of the transition that appended it, or
// "ingress/<idempotency key>" for a fact posted from outside), when it was
// appended (At), its payload (Data) and the hash of the fact before it (Prev).
// Fact.Hash covers every field, Prev included, so each fact commits to the
// whole log before it and a changed byte anywhere breaks the chain after it.
//
// Payloads are typed: each kind the runtime uses has a registered Go type
// (UserMessage for user.message, ActionCompleted for action.completed, ...).
// NewDraft encodes one, Decode reads one back, and Register adds a kind of
// your own. See Register for the encoding rules that keep old payloads
// readable and their hashes stable as types grow.
//
// There are two codecs. The storage codec (Encode, DecodeFact) is a small
// versioned binary envelope around the msgpack payload, checksummed, cheap to
// read without touching the payload. The people's codec is JSON Lines
// (WriteJSON, ParseJSON): readable, strict about what it accepts, and exact:
// a fact written and parsed back has the same hash.
package facts
