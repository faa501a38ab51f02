package seal

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Sealer seals the heads of one store's threads with one person's key
// into their witness log.
type Sealer struct {
	Key     Key
	Witness *Witness
	// Store names the store the threads are in (see Entry.Store).
	Store string
	// Anchor, when set, is given each entry once it is in the witness
	// log: the extension point for keeping it where the person's own
	// machine cannot rewrite it (a transparency log, a colleague's
	// witness). Its error is Seal's; the entry stays in the witness log.
	Anchor func(ctx context.Context, e Entry) error
}

// Seal signs the head of a thread of store, and appends the seal to the
// witness log (see Witness.Append).
func (s *Sealer) Seal(ctx context.Context, store thread.Store, head thread.Head) (Entry, error) {
	root, err := firstHash(ctx, store, head.Thread)
	if err != nil {
		return Entry{}, err
	}
	e, err := s.Witness.Append(ctx, Entry{Thread: head.Thread, Seq: head.Seq, Hash: head.Hash, Root: root, Store: s.Store}, s.Key)
	if err != nil {
		return Entry{}, err
	}
	if s.Anchor != nil {
		if err := s.Anchor(ctx, e); err != nil {
			return e, fmt.Errorf("anchor the seal of %s at seq %d: %w: %w", head.Thread, head.Seq, ErrNotAnchored, err)
		}
	}
	return e, nil
}

// SealHead is Seal without the entry: what the runtime calls when a
// Resume leaves a thread parked or ended (harness.Sealer).
func (s *Sealer) SealHead(ctx context.Context, store thread.Store, head thread.Head) error {
	_, err := s.Seal(ctx, store, head)
	return err
}

// CheckHead checks the log of head.Thread, whose last fact is head,
// against the seals of it this sealer's key made in its witness log for
// this store (the same first fact): none may be at a seq past head, and
// the last one at or before it must name the fact the log holds there.
// It is an ErrSealedAhead error when either fails, and nil when the
// witness log has no such seal; a witness log that cannot be read is not
// an error here (Check says so). The runtime calls it before a Resume
// drives a thread (harness.HeadChecker).
func (s *Sealer) CheckHead(ctx context.Context, store thread.Store, head thread.Head) error {
	found, _ := s.Witness.Read()
	if len(found) == 0 || head.Seq == 0 {
		return nil
	}
	root, err := firstHash(ctx, store, head.Thread)
	if err != nil {
		return err
	}
	pub := s.Key.Public()
	var last *Found
	for i := range found {
		e := &found[i]
		if e.Thread != head.Thread || e.Store != s.Store || e.Root != root || e.Key != pub {
			continue
		}
		if e.Seq > head.Seq {
			return fmt.Errorf("%w: %s was sealed at seq %d (witness %s, line %d), but its log ends at seq %d: the store lost facts it had kept, and driving it from there would do again what they record; nothing is run",
				ErrSealedAhead, head.Thread, e.Seq, e.Witness, e.Line, head.Seq)
		}
		if last == nil || e.Seq >= last.Seq {
			last = e
		}
	}
	if last == nil {
		return nil
	}
	f, ok, err := factAt(ctx, store, head.Thread, last.Seq)
	if err != nil {
		return err
	}
	if !ok || f.Hash() != last.Hash {
		return fmt.Errorf("%w: %s was sealed at seq %d with hash %.12s (witness %s, line %d), but its log holds another fact there: nothing is run",
			ErrSealedAhead, head.Thread, last.Seq, last.Hash, last.Witness, last.Line)
	}
	return nil
}

// factAt reads the fact of thread id at seq; ok is false past the log's
// end.
func factAt(ctx context.Context, store thread.Store, id string, seq uint64) (f facts.Fact, ok bool, err error) {
	for f, err := range store.Read(ctx, id, seq) {
		if err != nil {
			return facts.Fact{}, false, fmt.Errorf("read %s at seq %d: %w", id, seq, err)
		}
		return f, f.Seq == seq, nil
	}
	return facts.Fact{}, false, nil
}

func firstHash(ctx context.Context, store thread.Store, id string) (facts.Hash, error) {
	f, ok, err := factAt(ctx, store, id, 1)
	if err != nil {
		return facts.Hash{}, err
	}
	if !ok {
		return facts.Hash{}, fmt.Errorf("seal %s: %w", id, thread.ErrNotFound)
	}
	return f.Hash(), nil
}

// Status is what Check says of one seal.
type Status string

// The statuses of a seal.
const (
	// StatusHolds: the log has the fact sealed, at the seq sealed.
	StatusHolds Status = "holds"
	// StatusBroken: the log is not the one sealed (a cut tail, a
	// rewrite, a fork), or the signature does not verify.
	StatusBroken Status = "broken"
	// StatusUnknownKey: signed by a key nobody named; it proves nothing
	// and is not checked against the log.
	StatusUnknownKey Status = "unknown_key"
)

// Verdict is Check's word on one seal.
type Verdict struct {
	Found
	Status Status
	Reason string
	// rewritten: broken by another fact at its seq.
	rewritten bool
}

// Report is what Check found of a thread's seals.
type Report struct {
	Thread string
	// Head is the log's last seq.
	Head uint64
	// Seals are the seals of this thread, in the order read.
	Seals []Verdict
	// Elsewhere counts the seals of threads of this id in other stores
	// (another first fact, another store): not this log's, not checked.
	Elsewhere int
	// Missing are the keys the verifier required (CheckOptions.Require)
	// that sealed nothing of the thread.
	Missing []PublicKey
	// Unread say which places seals were looked for in were not read
	// whole, and why (a caller's notes: Check leaves it as it is).
	Unread []string
}

// Sealed reports whether a trusted seal of the log holds.
func (r Report) Sealed() bool {
	return slices.ContainsFunc(r.Seals, func(v Verdict) bool { return v.Status == StatusHolds })
}

// Latest is the holding seal of the highest seq, if any.
func (r Report) Latest() (Verdict, bool) {
	var best Verdict
	ok := false
	for _, v := range r.Seals {
		if v.Status == StatusHolds && (!ok || v.Seq >= best.Seq) {
			best, ok = v, true
		}
	}
	return best, ok
}

// Err is the first broken seal (a *BrokenError), else ErrNoSealByKey
// for a required key that sealed nothing, else nil.
func (r Report) Err() error {
	for _, v := range r.Seals {
		if v.Status == StatusBroken {
			return &BrokenError{Thread: r.Thread, Seq: v.Seq, At: v.At, Key: v.Key, Witness: v.Witness, Line: v.Line, Reason: v.Reason}
		}
	}
	if len(r.Missing) > 0 {
		return fmt.Errorf("thread %s: %v: %w", r.Thread, r.Missing, ErrNoSealByKey)
	}
	return nil
}

// CheckOptions say which seals Check trusts.
type CheckOptions struct {
	// Store names the store the log is read from (see Entry.Store).
	Store string
	// Trusted are the keys whose seals are checked against the log.
	Trusted []PublicKey
	// Require are keys (trusted too) that must have sealed the thread:
	// the keys a person named to verify someone else's seals.
	Require []PublicKey
}

// Check reads the log of thread id in store against the seals found of
// it. A seal is this log's when it names the thread and either its first
// fact or its store (a seal of this store whose first fact differs is a
// rewrite of the first fact). Each is then:
//
//   - broken, if its signature does not verify (whoever signed it);
//   - unknown_key, if its key is not trusted: not checked further;
//   - broken, if the log's first fact is not the one sealed, if the log
//     ends before its seq (a cut tail), or if the fact at its seq has
//     another hash (the log was rewritten at or before it, or forked
//     after an earlier head);
//   - holds otherwise. With the hash chain intact up to it (the store's
//     Verify), the log up to the seal's seq is the one sealed.
//
// The log's prefix is read only at the seals' seqs: the chain is the
// store's Verify's to check.
func Check(ctx context.Context, store thread.Store, id string, found []Found, o CheckOptions) (Report, error) {
	r := Report{Thread: id}
	head, err := store.Head(ctx, id)
	if err != nil {
		return r, fmt.Errorf("check the seals of %s: %w", id, err)
	}
	r.Head = head.Seq
	root, err := firstHash(ctx, store, id)
	if err != nil {
		return r, err
	}
	trusted := append(slices.Clone(o.Trusted), o.Require...)
	used := map[PublicKey]bool{} // required keys that sealed this log; membership only
	for _, fd := range found {
		e := fd.Entry
		if e.Thread != id {
			continue
		}
		if e.Root != root && e.Store != o.Store {
			r.Elsewhere++
			continue
		}
		v := Verdict{Found: fd, Status: StatusHolds}
		switch {
		case !e.Signed():
			v.Status, v.Reason = StatusBroken, "its signature does not verify with its key"
		case !slices.Contains(trusted, e.Key):
			v.Status, v.Reason = StatusUnknownKey, "signed by a key not named: not checked"
		case e.Root != root:
			v.Status, v.Reason = StatusBroken, fmt.Sprintf("the log's first fact hashes to %s, not %s as sealed: the log was rewritten from its first fact (or the store was made anew, and this is another thread of the same id)", root, e.Root)
		case e.Seq > head.Seq:
			v.Status, v.Reason = StatusBroken, fmt.Sprintf("the log ends at seq %d, but it was sealed at seq %d: its tail was cut", head.Seq, e.Seq)
		default:
			f, ok, err := factAt(ctx, store, id, e.Seq)
			if err != nil {
				return r, err
			}
			if !ok {
				v.Status, v.Reason = StatusBroken, fmt.Sprintf("the log has no fact at seq %d: its tail was cut", e.Seq)
			} else if h := f.Hash(); h != e.Hash {
				v.Status, v.Reason, v.rewritten = StatusBroken, fmt.Sprintf("the fact at seq %d hashes to %s, not %s as sealed: the log was rewritten at or before seq %d, or forked after it", e.Seq, short(h), short(e.Hash), e.Seq), true
			}
		}
		if v.Status == StatusHolds && slices.Contains(o.Require, e.Key) {
			used[e.Key] = true
		}
		r.Seals = append(r.Seals, v)
	}
	// A rewrite lies after the latest seal before it that holds.
	for i, v := range r.Seals {
		if !v.rewritten {
			continue
		}
		var below uint64
		for _, w := range r.Seals {
			if w.Status == StatusHolds && w.Seq < v.Seq && w.Seq > below {
				below = w.Seq
			}
		}
		if below > 0 {
			r.Seals[i].Reason += fmt.Sprintf(" (the seal at seq %d holds: the change is after it)", below)
		}
	}
	for _, k := range o.Require {
		if !used[k] {
			r.Missing = append(r.Missing, k)
		}
	}
	return r, nil
}

func short(h facts.Hash) string { return h.String()[:12] }
