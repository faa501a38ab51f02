package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-7cc7a084/harness/facts"
)

// cmdForge changes a Pebble store's thread as someone who can write the
// store could, through the key layout thread's package comment documents
// (the harness holding no store meanwhile):
//
//	forge rewrite DB THREAD SEQ [keep-snapshots]  change the fact at SEQ, recompute every later hash and the head record, drop the thread's snapshots (unless keep-snapshots)
//	forge cut DB THREAD SEQ                       drop the facts after SEQ, their causes and snapshots; the head record is SEQ's
//	forge corrupt DB THREAD SEQ                   change the fact at SEQ in place: no later hash recomputed
//
// The change to a fact: a user message's text is replaced; any other
// fact's time moves by a nanosecond.
func cmdForge(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 || len(args) > 5 {
		ts.Fatalf("usage: forge rewrite|cut|corrupt DB THREAD SEQ [keep-snapshots]")
	}
	op, dir, id := args[0], ts.MkAbs(args[1]), args[2]
	seq, err := strconv.ParseUint(args[3], 10, 64)
	ts.Check(err)
	keep := len(args) == 5 && args[4] == "keep-snapshots"
	db, err := pebble.Open(dir, &pebble.Options{})
	ts.Check(err)
	defer func() { ts.Check(db.Close()) }()

	prefix := func(table byte) []byte { return append(append([]byte{table}, id...), 0) }
	upper := func(p []byte) []byte { u := bytes.Clone(p); u[len(u)-1] = 1; return u }
	factKey := func(s uint64) []byte { return binary.BigEndian.AppendUint64(prefix('f'), s) }
	var log []facts.Fact
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix('f'), UpperBound: upper(prefix('f'))})
	ts.Check(err)
	for ok := it.First(); ok; ok = it.Next() {
		f, err := facts.DecodeFact(id, it.Value())
		ts.Check(err)
		log = append(log, f)
	}
	ts.Check(it.Close())
	if seq == 0 || seq > uint64(len(log)) {
		ts.Fatalf("forge: thread %s has %d facts, no seq %d", id, len(log), seq)
	}
	b := db.NewBatch()
	put := func(f facts.Fact) {
		v, err := facts.Encode(f)
		ts.Check(err)
		ts.Check(b.Set(factKey(f.Seq), v, nil))
	}
	dropSnapshots := func(after uint64) {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix('s'), UpperBound: upper(prefix('s'))})
		ts.Check(err)
		for ok := it.First(); ok; ok = it.Next() {
			if binary.BigEndian.Uint64(it.Key()[len(it.Key())-8:]) > after {
				ts.Check(b.Delete(bytes.Clone(it.Key()), nil))
			}
		}
		ts.Check(it.Close())
	}
	change := func(f *facts.Fact) {
		if f.Kind == facts.KindUserMessage {
			d, err := facts.NewDraft(f.Kind, f.Cause, facts.UserMessage{Text: "Forged: set the cache TTL to 3000"})
			ts.Check(err)
			f.Data = d.Data
			return
		}
		f.At = f.At.Add(time.Nanosecond)
	}
	last := log[len(log)-1]
	switch op {
	case "corrupt":
		change(&log[seq-1])
		put(log[seq-1])
		if seq == uint64(len(log)) {
			last = log[seq-1]
		}
	case "rewrite":
		change(&log[seq-1])
		prev := facts.Hash{}
		if seq > 1 {
			prev = log[seq-2].Hash()
		}
		for i := seq - 1; i < uint64(len(log)); i++ {
			log[i].Prev = prev
			prev = log[i].Hash()
			put(log[i])
		}
		last = log[len(log)-1]
		if !keep {
			dropSnapshots(0)
		}
	case "cut":
		for _, f := range log[seq:] {
			ts.Check(b.Delete(factKey(f.Seq), nil))
		}
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix('c'), UpperBound: upper(prefix('c'))})
		ts.Check(err)
		for ok := it.First(); ok; ok = it.Next() {
			if binary.BigEndian.Uint64(it.Value()) > seq {
				ts.Check(b.Delete(bytes.Clone(it.Key()), nil))
			}
		}
		ts.Check(it.Close())
		dropSnapshots(seq)
		last = log[seq-1]
	default:
		ts.Fatalf("forge: %q: want rewrite, cut or corrupt", op)
	}
	if op != "corrupt" || seq == uint64(len(log)) {
		// The head record: version, seq (uvarint), hash, kind (uvarint
		// length, bytes), at (int64 big-endian), CRC-32C little-endian.
		h := []byte{1}
		h = binary.AppendUvarint(h, last.Seq)
		hash := last.Hash()
		h = append(h, hash[:]...)
		h = binary.AppendUvarint(h, uint64(len(last.Kind)))
		h = append(h, last.Kind...)
		h = binary.BigEndian.AppendUint64(h, uint64(last.At.UnixNano()))
		h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, crc32.MakeTable(crc32.Castagnoli)))
		ts.Check(b.Set(append([]byte{'h'}, id...), h, nil))
	}
	ts.Check(b.Commit(pebble.Sync))
}
