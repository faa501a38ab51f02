package natsstore

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Append appends drafts to id if its head is still after; see thread.Store.
//
// An append is one record, published once on the thread's subject with
// Nats-Expected-Last-Subject-Sequence set to the stream seq of the
// thread's last record as the store's view of the thread has it (0 for a
// new thread): the server stores it only if no record came since, so
// there is one winner per head, and the causes, checked against the view,
// were checked against the whole log the record follows. A view that is
// behind is refused by the server and catches up (see state.go); a view
// whose head is not after catches up before anything is sent, and a
// duplicate cause is reported before a moved head, since it is the final
// answer.
//
// The record carries Nats-Msg-Id <thread>/<first cause>/<expected seq>: a
// publish retried after its answer was lost (a timeout, a leader change)
// is dropped by the server as a duplicate of the first, and Append then
// finds its own record after the expected one and reports success. A
// record too large for one message keeps its facts in parts published
// first on the thread's stage subject (see "Records" in the package
// comment); the parts are invisible until the record naming them is
// stored.
func (s *Store) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	if err := thread.ValidateID(id); err != nil {
		return thread.Head{}, fmt.Errorf("append: %w", err)
	}
	if len(drafts) == 0 {
		return thread.Head{}, fmt.Errorf("append to %s: %w", id, thread.ErrEmptyAppend)
	}
	for i, d := range drafts {
		if err := d.Validate(); err != nil {
			return thread.Head{}, fmt.Errorf("append to %s: draft %d: %w", id, i, err)
		}
	}
	if err := s.begin(ctx, "append to", id); err != nil {
		return thread.Head{}, err
	}
	defer s.leave()
	st := s.cache.get(id)
	if after == 0 {
		// A new thread is listed before its first record is stored, so
		// that the index never lacks a thread with facts.
		st.mu.Lock()
		known := st.loaded && st.v.seq != 0
		st.mu.Unlock()
		if !known {
			if err := s.index.add(ctx, id); err != nil {
				return thread.Head{}, fmt.Errorf("append to %s: list the new thread: %w", id, err)
			}
		}
	}

	var (
		why   error // why the last attempt was tried again
		stale bool  // the view is known to be behind
	)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt > 20 {
				return thread.Head{}, fmt.Errorf("append to %s after seq %d: gave up after %d attempts: %w", id, after, attempt, why)
			}
			select {
			case <-ctx.Done():
				return thread.Head{}, fmt.Errorf("append to %s: %w", id, ctx.Err())
			case <-time.After(time.Duration(attempt) * time.Millisecond):
			}
		}
		st.mu.Lock()
		if stale || !st.loaded || st.v.head.Seq != after {
			if _, err := s.refresh(ctx, st); err != nil {
				st.mu.Unlock()
				return thread.Head{}, fmt.Errorf("append to %s: %w", id, err)
			}
		}
		for _, d := range drafts {
			if seq, ok := st.v.causes[d.Cause]; ok {
				st.mu.Unlock()
				return thread.Head{}, &thread.DuplicateCauseError{Thread: id, Cause: d.Cause, Seq: seq}
			}
		}
		if st.v.head.Seq != after {
			head := st.v.head
			st.mu.Unlock()
			return thread.Head{}, &thread.ConflictError{Thread: id, Expected: after, Actual: head}
		}
		head, expected := st.v.head, st.v.seq
		st.mu.Unlock()

		body, next, err := frames(id, head, drafts, s.clock().UTC().Round(0))
		if err != nil {
			return thread.Head{}, fmt.Errorf("append to %s: %w", id, err)
		}
		msgID := id + "/" + drafts[0].Cause + "/" + strconv.FormatUint(expected, 10)
		rec, err := s.stage(ctx, id, head.Seq+1, next, body, msgID)
		if err != nil {
			return thread.Head{}, fmt.Errorf("append to %s: %w", id, err)
		}
		// Last chance to give up: once the record is sent, the append may
		// happen, and Append waits to learn whether it did.
		if err := ctx.Err(); err != nil {
			return thread.Head{}, fmt.Errorf("append to %s: %w", id, err)
		}
		m := &nats.Msg{Subject: s.l.threadSubject(id), Data: rec, Header: nats.Header{
			jetstream.ExpectedLastSubjSeqHeader: []string{strconv.FormatUint(expected, 10)},
			jetstream.MsgIDHeader:               []string{msgID},
		}}
		ack, err := s.publish(ctx, m)
		var refused *refusedError
		switch {
		case err == nil && !ack.Duplicate:
			s.appended(st, expected, ack.Seq, next, drafts)
			return next, nil
		case err == nil, errors.As(err, &refused) && refused.expectation(), errors.Is(err, errUnknown):
			// A duplicate of an earlier try, or refused because a record
			// came after the expected one (perhaps an earlier try), or no
			// answer: look at the record after the expected one.
			r, ours, lerr := s.landed(ctx, id, expected, rec)
			switch {
			case lerr != nil && errors.Is(err, errUnknown):
				return thread.Head{}, fmt.Errorf("append to %s after seq %d: %w; reading the thread failed too: %w", id, after, err, lerr)
			case lerr != nil:
				return thread.Head{}, fmt.Errorf("append to %s: %w", id, lerr)
			case ours:
				s.appended(st, expected, r.seq, next, drafts)
				return next, nil
			case errors.Is(err, errUnknown) && r == nil:
				return thread.Head{}, fmt.Errorf("append to %s after seq %d: %w", id, after, err)
			}
			// Another's record is there, or a record on the subject was in
			// flight: catch up and look again.
			stale = true
			why = err
			if why == nil {
				why = errNotOurs
			}
		default:
			return thread.Head{}, fmt.Errorf("append to %s after seq %d: %w", id, after, err)
		}
	}
}

// appended adds the record of an append to st's view, if the view is
// still where the append expected it.
func (s *Store) appended(st *tstate, expected, seq uint64, next thread.Head, drafts []facts.Draft) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loaded && st.v.seq == expected {
		st.v.appended(seq, next, drafts)
		s.cache.resize(st, int(next.Seq))
	}
}

// headerRoom is what a record's headers take at most beside its message
// id: the expected sequence, the names, the framing.
const headerRoom = 128

// stage returns the record of the facts first … next.Seq, whose frames are
// body, for the message with id msgID. If the record would not fit one
// message, stage first publishes body in parts on id's stage subject and
// returns the record that names them.
func (s *Store) stage(ctx context.Context, id string, first uint64, next thread.Head, body []byte, msgID string) ([]byte, error) {
	limit := int(s.nc.MaxPayload()) - headerRoom - len(msgID)
	if rec := encodeRecord(first, next, body, nil); len(rec) <= limit {
		return rec, nil
	}
	size := int(s.nc.MaxPayload()) - headerRoom
	if size <= 0 || limit <= recordRoom {
		return nil, fmt.Errorf("the server's max_payload of %d bytes is too small: %w", s.nc.MaxPayload(), ErrTooLarge)
	}
	if n := (len(body) + size - 1) / size; recordRoom+n*partRoom > limit {
		return nil, fmt.Errorf("%d bytes of facts would be %d parts, more than one record can name: %w", len(body), n, ErrTooLarge)
	}
	parts := make([]part, 0, (len(body)+size-1)/size)
	for len(body) > 0 {
		chunk := body[:min(size, len(body))]
		body = body[len(chunk):]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ack, err := s.publish(ctx, &nats.Msg{Subject: s.l.stageSubject(id), Data: chunk})
		if err != nil {
			return nil, fmt.Errorf("stage part %d of the append: %w", len(parts)+1, err)
		}
		parts = append(parts, part{seq: ack.Seq, size: uint64(len(chunk)), sum: sha256.Sum256(chunk)})
	}
	return encodeRecord(first, next, nil, parts), nil
}

// pubAck is the server's answer to a publish.
type pubAck struct {
	Stream    string `json:"stream"`
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate"`
	Error     *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// refusedError is a publish the server answered with an error: nothing was
// stored.
type refusedError struct {
	code, errCode int
	description   string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("publish refused: %s (code %d, error code %d)", e.description, e.code, e.errCode)
}

// JetStream error codes the store tells apart.
const (
	errWrongLastSeq         = 10071 // an expected sequence did not hold
	errWrongLastSeqConstant = 10164 // the same, or the subject was busy with another publish
	errJSNotAvailable       = 10008 // JetStream not available (an election, say)
	// errDuplicateInProcess: a message with the same id is being stored
	// (a clustered stream): another writer's append of the same first
	// cause at the same head, racing this one. Asked again, the server
	// answers as for a duplicate, and the record that landed decides.
	errDuplicateInProcess = 10158
)

func (e *refusedError) expectation() bool {
	return e.errCode == errWrongLastSeq || e.errCode == errWrongLastSeqConstant
}

// transient reports whether the server refused for now only: no leader,
// say.
func (e *refusedError) transient() bool {
	return e.code == 503 || e.errCode == errJSNotAvailable || e.errCode == errDuplicateInProcess
}

// errNotOurs: the server took a publish for a duplicate of an earlier
// one, and the record after the one expected is not it.
var errNotOurs = errors.New("the server answered a duplicate, and the record after the expected one is another's")

// errUnknown: a publish got no answer in time; it may have been stored.
var errUnknown = errors.New("no answer in time (the outcome is unknown: read the thread)")

// publish sends m to the stream and waits for the server's answer, trying
// again while nobody answers for the stream (no leader, a node gone: the
// message reached no one), the server answers that it cannot for now, or no
// answer comes within a few seconds (the node that took m may have gone
// away: a retry reaches the new leader, and a message that was stored after
// all is dropped as a duplicate or refused by its expected sequence), for
// up to the store's timeout in all. The wait is not cut short by ctx once m
// is sent, so that the caller learns the outcome. It returns the ack, a
// *refusedError, an error matching errUnknown (the message may have been
// stored), or another error.
func (s *Store) publish(ctx context.Context, m *nats.Msg) (pubAck, error) {
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	each := min(max(s.timeout/5, 500*time.Millisecond), 2*time.Second)
	var last error
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 250*time.Millisecond) {
		try, cancelTry := context.WithTimeout(wait, each)
		reply, err := s.nc.RequestMsgWithContext(try, m)
		cancelTry()
		if err == nil && s.loseAnswers.Load() > 0 && s.loseAnswers.Add(-1) >= 0 {
			err = context.DeadlineExceeded // a test: the answer was lost
		}
		var ack pubAck
		switch {
		case err == nil:
			if jerr := json.Unmarshal(reply.Data, &ack); jerr != nil {
				return pubAck{}, fmt.Errorf("publish %s: reply %q: %w", m.Subject, reply.Data, jerr)
			}
			if ack.Error == nil {
				if ack.Stream != s.name {
					return pubAck{}, fmt.Errorf("publish %s: stored in stream %q, not %q", m.Subject, ack.Stream, s.name)
				}
				return ack, nil
			}
			refused := &refusedError{code: ack.Error.Code, errCode: ack.Error.ErrCode, description: ack.Error.Description}
			if !refused.transient() {
				return pubAck{}, refused
			}
			last = refused
		case errors.Is(err, nats.ErrNoResponders), errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrReconnectBufExceeded):
			last = err // sent to no one: try again
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
			last = errUnknown
		default:
			return pubAck{}, fmt.Errorf("publish %s: %w", m.Subject, err)
		}
		select {
		case <-wait.Done():
			if errors.Is(last, errUnknown) {
				return pubAck{}, fmt.Errorf("publish %s: %w after %s", m.Subject, errUnknown, s.timeout)
			}
			return pubAck{}, fmt.Errorf("publish %s: gave up after %s: %w", m.Subject, s.timeout, last)
		case <-time.After(pause):
		}
	}
}

// Head returns id's head; see thread.Store. It is one get: the last
// message on the thread's subject, whose record names the head.
func (s *Store) Head(ctx context.Context, id string) (thread.Head, error) {
	if err := s.begin(ctx, "head of", id); err != nil {
		return thread.Head{}, err
	}
	defer s.leave()
	r, err := s.lastRecord(ctx, id)
	if err != nil {
		return thread.Head{}, fmt.Errorf("head of %s: %w", id, err)
	}
	if r == nil {
		return thread.Head{}, fmt.Errorf("head of %s: %w", id, thread.ErrNotFound)
	}
	return r.head(id), nil
}

// HasCause reports whether a fact of id has cause; see thread.Store. It
// gets the last record and answers from the store's view of the thread,
// caught up to that record first.
func (s *Store) HasCause(ctx context.Context, id, cause string) (bool, error) {
	if err := s.begin(ctx, "cause in", id); err != nil {
		return false, err
	}
	defer s.leave()
	if err := facts.ValidateCause(cause); err != nil {
		return false, fmt.Errorf("cause in %s: %w", id, err)
	}
	st := s.cache.get(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, err := s.refresh(ctx, st); err != nil {
		return false, fmt.Errorf("cause in %s: %w", id, err)
	}
	_, ok := st.v.causes[cause]
	return ok, nil
}
