package natsstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Reading records: the last one by subject (the head), one by stream seq,
// the next one on the subject from a stream seq, and a run of them through
// a stream seq, by gets when they are few and through an ordered consumer
// otherwise.

// fewFacts is the most facts a read fetches with gets, one record per get;
// a longer read makes an ordered consumer, which costs about as much as ten
// gets to set up and then streams.
const fewFacts = 8

// consumerIdle is how long the server keeps a read's consumer that nobody
// pulls from. A read deletes its consumer when it ends; this is for a
// reader that died.
const consumerIdle = 30 * time.Second

// getMsg gets one message of the stream: the last on subject (last), the
// first on subject at or after seq (next), or the one at seq. It returns nil
// if there is none.
//
// A get that has no answer within getAttempt is sent again (a get changes
// nothing): a request sent while the stream elects a leader is answered
// by no one, and would otherwise wait out the whole timeout.
func (s *Store) getMsg(ctx context.Context, subject string, seq uint64, last bool) (*jetstream.RawStreamMsg, error) {
	ctx, cancel := s.requestContext(ctx)
	defer cancel()
	m, err := retry(ctx, func() (*jetstream.RawStreamMsg, error) {
		actx, cancel := context.WithTimeout(ctx, getAttempt)
		defer cancel()
		var (
			m   *jetstream.RawStreamMsg
			err error
		)
		switch {
		case last:
			m, err = s.stream.GetLastMsgForSubject(actx, subject)
		case subject != "":
			m, err = s.stream.GetMsg(actx, seq, jetstream.WithGetMsgSubject(subject))
		default:
			m, err = s.stream.GetMsg(actx, seq)
		}
		if err != nil && actx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", errNoAnswerYet, err)
		}
		return m, err
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, err
	}
	return m, nil
}

// getAttempt bounds one attempt of a get (see getMsg).
const getAttempt = 2 * time.Second

// errNoAnswerYet: an attempt of a request that nobody answered in time; it
// may be sent again.
var errNoAnswerYet = errors.New("no answer yet")

// corrupt returns a *thread.CorruptError of id at seq.
func corrupt(id string, seq uint64, format string, args ...any) error {
	return &thread.CorruptError{Thread: id, Seq: seq, Err: fmt.Errorf(format, args...)}
}

// recordOf decodes the record of id in m, which must be on id's subject.
func (s *Store) recordOf(id string, m *jetstream.RawStreamMsg) (*record, error) {
	if m.Subject != s.l.threadSubject(id) {
		return nil, corrupt(id, 0, "stream seq %d is on subject %s, not the thread's", m.Sequence, m.Subject)
	}
	r, err := decodeRecord(m.Sequence, m.Data)
	if err != nil {
		return nil, &thread.CorruptError{Thread: id, Err: err}
	}
	return r, nil
}

// lastRecord returns id's last record, or nil if id has none.
func (s *Store) lastRecord(ctx context.Context, id string) (*record, error) {
	m, err := s.getMsg(ctx, s.l.threadSubject(id), 0, true)
	if err != nil || m == nil {
		return nil, err
	}
	return s.recordOf(id, m)
}

// nextRecord returns id's first record at stream seq from or after, or nil.
func (s *Store) nextRecord(ctx context.Context, id string, from uint64) (*record, []byte, error) {
	m, err := s.getMsg(ctx, s.l.threadSubject(id), max(from, 1), false)
	if err != nil || m == nil {
		return nil, nil, err
	}
	r, err := s.recordOf(id, m)
	return r, m.Data, err
}

// errStop: the caller of a scan wants no more.
var errStop = errors.New("stop")

// scan calls fn with id's records from stream seq start through stream seq
// target, which must be one of them, in order. It gets them one by one if
// few, else it reads them through an ordered consumer; a consumer that
// stalls (no record for a while: it runs on a replica that lags, say) is
// given up, and the rest is got one by one from the leader.
func (s *Store) scan(ctx context.Context, id string, start, target uint64, few bool, fn func(*record) error) error {
	if !few {
		err := s.consume(ctx, id, start, target, fn)
		var st *stalledError
		if !errors.As(err, &st) {
			return err
		}
		start = st.next
	}
	for seq := start; ; {
		r, _, err := s.nextRecord(ctx, id, seq)
		switch {
		case err != nil:
			return err
		case r == nil || r.seq > target:
			return corrupt(id, 0, "the record at stream seq %d is missing", target)
		}
		if err := fn(r); err != nil {
			return err
		}
		if r.seq == target {
			return nil
		}
		seq = r.seq + 1
	}
}

// stalledError: a consumer delivered nothing for a while, or failed; the
// read goes on from stream seq next.
type stalledError struct {
	next uint64
	err  error
}

func (e *stalledError) Error() string {
	return fmt.Sprintf("the consumer stalled before stream seq %d: %v", e.next, e.err)
}

// errStalled: no record from the consumer for a while.
var errStalled = errors.New("no record from the consumer")

// consumerStall is how long a read waits for its consumer's next record
// before it gets the rest one by one.
const consumerStall = 2 * time.Second

// consume reads id's records from stream seq start through target through
// an ordered consumer, which the server delivers in order and without a
// gap (the client makes a new one from where it was if a delivery goes
// missing), and deletes the consumer at the end. A consumer that delivers
// nothing for consumerStall, or fails, ends the read with a *stalledError
// naming where to go on.
func (s *Store) consume(ctx context.Context, id string, start, target uint64, fn func(*record) error) error {
	oc, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{s.l.threadSubject(id)},
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       start,
		InactiveThreshold: consumerIdle,
		// Made again, from where it was, if a delivery goes missing or the
		// consumer's node goes away; a few times, not forever.
		MaxResetAttempts: 3,
	})
	if err != nil {
		return &stalledError{next: start, err: err}
	}
	// A wait for the next record is cut short by ctx, or after
	// consumerStall; the timer runs only while waiting.
	stall := min(s.timeout, consumerStall)
	idle, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer timer.Stop()
	it, err := oc.Messages(jetstream.PullMaxMessages(pullMessages))
	if err != nil {
		return &stalledError{next: start, err: err}
	}
	defer func() {
		it.Stop()
		if info := oc.CachedInfo(); info != nil {
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), min(s.timeout, time.Second))
			_ = s.js.DeleteConsumer(dctx, s.name, info.Name)
			dcancel()
		}
	}()
	next := start
	for {
		m, err := it.Next(jetstream.NextContext(idle))
		timer.Stop()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if cause := context.Cause(idle); cause != nil {
				err = cause
			}
			return &stalledError{next: next, err: err}
		}
		seq, ok := streamSeq(m.Reply())
		if !ok {
			return fmt.Errorf("read through a consumer: a message with no stream seq in its reply subject %q", m.Reply())
		}
		if seq > target {
			return corrupt(id, 0, "the record at stream seq %d is missing", target)
		}
		r, err := decodeRecord(seq, m.Data())
		if err != nil {
			return &thread.CorruptError{Thread: id, Err: err}
		}
		if err := fn(r); err != nil {
			return err
		}
		if seq == target {
			return nil
		}
		next = seq + 1
		if n := s.stallAfter.Load(); n > 0 && int64(next-start) >= n {
			return &stalledError{next: next, err: errStalled} // a test
		}
		timer.Reset(stall)
	}
}

// streamSeq returns the stream seq a consumer's message carries in its
// reply subject: $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.…
// (9 tokens), or with a domain and an account hash after ACK (12 or more).
// It is what the client's Metadata reads, without the rest.
func streamSeq(reply string) (uint64, bool) {
	n := strings.Count(reply, ".") + 1
	var at int
	switch {
	case n == 9:
		at = 5
	case n >= 12:
		at = 7
	default:
		return 0, false
	}
	for range at {
		_, reply, _ = strings.Cut(reply, ".")
	}
	tok, _, _ := strings.Cut(reply, ".")
	seq, err := strconv.ParseUint(tok, 10, 64)
	return seq, err == nil && strings.HasPrefix(reply, tok) && seq > 0
}

// pullMessages is how many records a consumer asks the server for at a
// time (and buffers at most: 500 records of the usual few hundred bytes).
const pullMessages = 500

// readFacts calls fn with the facts of record r of id from seq from on, in
// order, and checks that they are the record's facts: their seqs, and how
// many. A staged record's parts are fetched one at a time.
func (s *Store) readFacts(ctx context.Context, id string, r *record, from uint64, fn func(facts.Fact) error) error {
	want := r.first
	each := func(b []byte) ([]byte, error) {
		for {
			frame, rest, ok, err := nextFrame(b)
			if err != nil {
				return nil, corrupt(id, want, "record at stream seq %d: %v", r.seq, err)
			}
			if !ok {
				return b, nil
			}
			b = rest
			if want > r.last() {
				return nil, corrupt(id, want, "record at stream seq %d holds more than its %d facts", r.seq, r.count)
			}
			if want >= from {
				f, err := facts.DecodeFact(id, frame)
				if err != nil {
					return nil, &thread.CorruptError{Thread: id, Seq: want, Err: err}
				}
				if f.Seq != want {
					return nil, corrupt(id, want, "record at stream seq %d holds seq %d where seq %d belongs", r.seq, f.Seq, want)
				}
				if err := fn(f); err != nil {
					return nil, err
				}
			}
			want++
		}
	}
	var rest []byte
	var err error
	switch r.form {
	case formInline:
		if rest, err = each(r.body); err != nil {
			return err
		}
	case formStaged:
		for i := range r.parts {
			if err := ctx.Err(); err != nil {
				return err
			}
			data, err := s.partData(ctx, id, r, i)
			if err != nil {
				return err
			}
			// A fresh buffer: what is left of the part before, then this
			// one, so that memory is one part and one fact.
			buf := make([]byte, 0, len(rest)+len(data))
			if rest, err = each(append(append(buf, rest...), data...)); err != nil {
				return err
			}
		}
	}
	switch {
	case len(rest) != 0:
		return corrupt(id, want, "record at stream seq %d ends in the middle of a fact", r.seq)
	case want != r.last()+1:
		return corrupt(id, want, "record at stream seq %d holds %d facts, not %d", r.seq, want-r.first, r.count)
	}
	return nil
}

// partData fetches part i of staged record r of id and checks it.
func (s *Store) partData(ctx context.Context, id string, r *record, i int) ([]byte, error) {
	p := r.parts[i]
	m, err := s.getMsg(ctx, "", p.seq, false)
	switch {
	case err != nil:
		return nil, err
	case m == nil:
		return nil, corrupt(id, r.first, "record at stream seq %d: part %d (stream seq %d) is missing", r.seq, i+1, p.seq)
	case m.Subject != s.l.stageSubject(id):
		return nil, corrupt(id, r.first, "record at stream seq %d: part %d (stream seq %d) is on subject %s, not the thread's stage", r.seq, i+1, p.seq, m.Subject)
	case uint64(len(m.Data)) != p.size || sha256.Sum256(m.Data) != p.sum:
		return nil, corrupt(id, r.first, "record at stream seq %d: part %d (stream seq %d) does not match its size and digest", r.seq, i+1, p.seq)
	}
	return m.Data, nil
}

// Read yields id's facts from seq from; see thread.Store.
//
// Read gets the last record first and reads up to it, so facts appended
// while it reads are not seen. It finds the record holding seq from in the
// store's cache of the thread, or by a binary search of the thread's
// records with gets (one get per halving of the stream). A read of at most
// fewFacts facts gets the records one by one; a longer one streams them
// through an ordered consumer. Each fact's checksum and place are checked;
// the hash chain is Verify's job.
func (s *Store) Read(ctx context.Context, id string, from uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		if err := s.begin(ctx, "read", id); err != nil {
			yield(facts.Fact{}, err)
			return
		}
		defer s.leave()
		if err := s.read(ctx, id, from, yield); err != nil && !errors.Is(err, errStop) {
			yield(facts.Fact{}, fmt.Errorf("read %s: %w", id, err))
		}
	}
}

func (s *Store) read(ctx context.Context, id string, from uint64, yield func(facts.Fact, error) bool) error {
	last, err := s.lastRecord(ctx, id)
	if err != nil || last == nil {
		return err
	}
	from = max(from, 1)
	if from > last.last() {
		return nil
	}
	// Where to start, and whether the read extends the cached view of the
	// thread (it does when it reads every record after the view's last).
	st := s.cache.get(id)
	st.mu.Lock()
	var (
		start uint64
		grow  *view // nil: the read does not add to the cache
	)
	switch {
	case st.loaded && from <= st.v.head.Seq:
		// The record holding from is at most last: from is at most its
		// last seq.
		start = st.v.recordHolding(from)
	case st.loaded && st.v.seq < last.seq:
		start, grow = st.v.seq+1, st.v.tail()
	case st.loaded && st.v.seq == last.seq:
		start = last.seq // from is past the cached head, so in the last record
	case from == 1:
		start, grow = 1, newView(id, last.last())
	}
	st.mu.Unlock()
	if start == 0 {
		if start, err = s.findRecord(ctx, id, from, last); err != nil {
			return err
		}
	}
	if grow != nil && last.last()-grow.head.Seq > uint64(s.cache.limit) {
		grow = nil // too long to keep
	}
	few := last.last()-from+1 <= fewFacts
	err = s.scan(ctx, id, start, last.seq, few, func(r *record) error {
		if grow != nil {
			if err := grow.begin(id, r); err != nil {
				return err
			}
		}
		err := s.readFacts(ctx, id, r, min(from, r.first), func(f facts.Fact) error {
			if grow != nil {
				if err := grow.add(id, r, f); err != nil {
					return err
				}
			}
			if f.Seq < from {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if !yield(f, nil) {
				grow = nil
				return errStop
			}
			return nil
		})
		if err != nil {
			return err
		}
		if grow != nil {
			grow.end(r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if grow != nil {
		s.cache.merge(st, grow)
	}
	return nil
}

// findRecord returns the stream seq of id's record holding fact seq from,
// which is at most last's last seq, by a binary search of the stream seqs
// up to last's: each probe gets the first record of id at or after a
// stream seq.
func (s *Store) findRecord(ctx context.Context, id string, from uint64, last *record) (uint64, error) {
	// found is always the stream seq of the first record at or after hi,
	// and that record holds from or a later seq.
	lo, hi, found := uint64(1), last.seq, last.seq
	for lo < hi {
		mid := lo + (hi-lo)/2
		r, _, err := s.nextRecord(ctx, id, mid)
		if err != nil {
			return 0, err
		}
		if r == nil || r.seq > found {
			return 0, corrupt(id, from, "the records at stream seqs %d to %d changed while read", mid, found)
		}
		if r.last() >= from {
			hi, found = mid, r.seq
		} else {
			lo = r.seq + 1
		}
	}
	return found, nil
}

// recordHolding returns the stream seq of the view's record holding fact
// seq, which must be at most the view's head.
func (v *view) recordHolding(seq uint64) uint64 {
	i := sort.Search(len(v.recs), func(i int) bool { return v.recs[i].last >= seq })
	return v.recs[i].seq
}

// landed reports whether the record right after stream seq after on id's
// subject is body: an append whose outcome was unknown, or refused when
// its retry found its first try stored, was stored.
func (s *Store) landed(ctx context.Context, id string, after uint64, body []byte) (*record, bool, error) {
	r, data, err := s.nextRecord(ctx, id, after+1)
	if err != nil || r == nil {
		return nil, false, err
	}
	return r, bytes.Equal(data, body), nil
}
