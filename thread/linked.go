package thread

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/seed-7cc7a084/harness/facts"
)

// ReadLinked reads facts 1 to upto of thread id, as Read does, for a copy
// of them into another thread (a fork, a rerun), and checks what Read
// does not: that they chain. Each fact's prev must be the hash of the one
// before, and the hash of fact upto must be what the log says follows
// it, the prev of fact upto+1 or, when upto is the last, the head's hash:
// a fact changed in place (its checksum made good) is found wherever it
// lies in the copied part, so a copy cannot carry it into a thread of its
// own whose chain the copy makes anew. visit is called with each fact in
// order; an error it returns ends the reading. ReadLinked returns the
// hash of fact upto, or a *CorruptError naming where the chain breaks.
// What lies after upto is not checked: a thread damaged later may be
// copied up to before the damage.
func ReadLinked(ctx context.Context, s Store, id string, upto uint64, visit func(facts.Fact) error) (facts.Hash, error) {
	head, err := s.Head(ctx, id)
	if err != nil {
		return facts.Hash{}, err
	}
	if upto < 1 || upto > head.Seq {
		return facts.Hash{}, fmt.Errorf("read %s: seq %d is not one of its facts (1 to %d)", id, upto, head.Seq)
	}
	// Chained passes a fact on once the next one (or the head) names it:
	// fact upto is checked by fact upto+1, and nothing after is read.
	var hash facts.Hash
	var seq uint64
	for f, err := range Chained(id, s.Read(ctx, id, 1), head) {
		if err != nil {
			return facts.Hash{}, err
		}
		if f.Seq != seq+1 {
			return facts.Hash{}, &CorruptError{Thread: id, Seq: seq + 1, Err: errors.New("missing")}
		}
		if err := visit(f); err != nil {
			return facts.Hash{}, err
		}
		if seq, hash = f.Seq, f.Hash(); seq == upto {
			return hash, nil
		}
	}
	return facts.Hash{}, &CorruptError{Thread: id, Seq: seq + 1, Err: errors.New("missing")}
}

// Chained passes on the facts of log, a reading of thread id, and checks
// as it goes what Read does not: that each is named by the next one's
// prev (the fact at head's seq by head's hash), and that the first, when
// it is seq 1, names no fact before it. A fact is passed on once that is
// checked — one fact behind the reading — so that where the chain breaks
// the fact changed is not passed on: a *CorruptError naming it comes
// instead, after the facts before, and the reading ends. A reader that
// prints a log (harness log) prints no fact the log's own links say was
// changed. The last fact read, when it is not the head's, is passed on as
// it is: nothing after it was read to check it by.
func Chained(id string, log iter.Seq2[facts.Fact, error], head Head) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		var held *facts.Fact // read, not yet passed on
		broken := func(seq uint64, why string) {
			yield(facts.Fact{}, &CorruptError{Thread: id, Seq: seq, Err: errors.New(why)})
		}
		for f, err := range log {
			if err != nil {
				if held != nil && !yield(*held, nil) {
					return
				}
				yield(f, err)
				return
			}
			switch {
			case held == nil && f.Seq == 1 && !f.Prev.IsZero():
				broken(1, "the first fact names a fact before it")
				return
			case held != nil && f.Seq != held.Seq+1:
				broken(held.Seq+1, "missing")
				return
			case held != nil && f.Prev != held.Hash():
				broken(held.Seq, fmt.Sprintf("seq %d names %.12s as the fact before it, but seq %d hashes to %.12s: it was changed", f.Seq, f.Prev, held.Seq, held.Hash()))
				return
			}
			if held != nil && !yield(*held, nil) {
				return
			}
			held = &f
		}
		if held == nil {
			return
		}
		if held.Seq == head.Seq && held.Hash() != head.Hash {
			broken(held.Seq, fmt.Sprintf("the head record names %.12s, but seq %d hashes to %.12s: it was changed", head.Hash, held.Seq, held.Hash()))
			return
		}
		yield(*held, nil)
	}
}
