package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// An append of one draft — most appends — is not a batch. The server
// stages every atomic batch before applying it, which costs milliseconds;
// a single message needs no staging. So a one-draft append publishes its
// fact alone, expecting the fact's subject to be empty, and its cause's
// marker right after, also expecting it empty:
//
//   - The fact's subject decides who appends at that seq, as in a batch:
//     the subject being empty means the head is still after.
//   - The cause is checked before the fact is published, against the
//     markers of every fact up to the head. If the publish then succeeds,
//     no fact was appended meanwhile (the head did not move), so the check
//     still holds.
//   - Between the fact and its marker the fact is "unsettled": its message
//     carries markerHeader, and its marker may be missing — for a moment,
//     or for good if the writer died in between. Every Append settles the
//     head before anything else (it writes the head's marker if missing,
//     expecting it empty, which is harmless if the writer did it first),
//     so only the head can ever be unsettled; HasCause and Verify take an
//     unsettled head's cause as marked.
const (
	markerHeader = "Harness-Marker"
	markerAfter  = "after" // the marker of this fact's cause is published after it
)

// settledCache remembers, per thread, the seq of the last fact this store
// wrote or settled the marker of, so that the next append need not look
// the marker up again.
type settledCache struct {
	mu sync.Mutex
	m  map[string]uint64
}

const maxSettled = 1 << 14

func (c *settledCache) has(id string, seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id] == seq
}

func (c *settledCache) set(id string, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSettled {
		c.m = make(map[string]uint64)
	}
	c.m[id] = seq
}

// lastFact returns the last fact of id, whether its marker may be
// missing (see markerHeader), and false if id has no facts.
func (s *Store) lastFact(ctx context.Context, id string) (f facts.Fact, unsettled, ok bool, err error) {
	m, err := s.get(ctx, s.l.factFilter(id))
	if err != nil || m == nil {
		return facts.Fact{}, false, false, err
	}
	if f, err = s.decodeFact(id, m); err != nil {
		return facts.Fact{}, false, false, err
	}
	unsettled = m.Header.Get(markerHeader) == markerAfter && !s.settled.has(id, f.Seq)
	return f, unsettled, true, nil
}

// settledHead returns id's head, first writing the marker of its last fact
// if that may be missing.
func (s *Store) settledHead(ctx context.Context, id string) (thread.Head, error) {
	f, unsettled, ok, err := s.lastFact(ctx, id)
	if err != nil || !ok {
		return thread.Head{Thread: id}, err
	}
	if unsettled {
		if err := s.settle(ctx, id, f); err != nil {
			return thread.Head{}, err
		}
	}
	return headOf(id, f), nil
}

// errMarkerInFlight: a marker was refused as written, but is not there to
// read yet. It is transient: Append tries again.
var errMarkerInFlight = errors.New("refused as written, but not there yet (being written?)")

// settle makes sure the marker of f's cause exists and names f. An error
// matching errMarkerInFlight is worth trying again.
func (s *Store) settle(ctx context.Context, id string, f facts.Fact) error {
	seq, ok, err := s.causeSeq(ctx, id, f.Cause)
	if err != nil {
		return err
	}
	if !ok {
		err := s.publishOne(ctx, &nats.Msg{Subject: s.l.causeSubject(id, f.Cause), Data: encodeMarker(f.Seq, f.Cause), Header: nats.Header{}})
		var refused *refusedError
		switch {
		case err == nil:
			seq = f.Seq
		case errors.As(err, &refused) && refused.expectation():
			// Written meanwhile, by the fact's writer or another settler,
			// or being written: with replicas the server refuses a subject
			// that is proposed but not applied yet (error 10164), and it is
			// not there to read yet. The caller may look again.
			if seq, ok, err = s.causeSeq(ctx, id, f.Cause); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("marker of cause %q of seq %d: %w", f.Cause, f.Seq, errMarkerInFlight)
			}
		default:
			return fmt.Errorf("marker of cause %q of seq %d: %w", f.Cause, f.Seq, err)
		}
	}
	if seq != f.Seq {
		return &thread.CorruptError{Thread: id, Seq: f.Seq, Err: fmt.Errorf("cause %q was already used at seq %d", f.Cause, seq)}
	}
	s.settled.set(id, f.Seq)
	return nil
}

// single returns the message of a one-draft append after head, and the
// head after it.
func (s *Store) single(id string, head thread.Head, d facts.Draft) (*nats.Msg, facts.Fact, error) {
	f := facts.Fact{Thread: id, Seq: head.Seq + 1, Kind: d.Kind, Cause: d.Cause, At: s.clock().UTC().Round(0), Data: d.Data, Prev: head.Hash}
	v, err := facts.Encode(f)
	if err != nil {
		return nil, facts.Fact{}, fmt.Errorf("append to %s: %w", id, err)
	}
	subject := s.l.factSubject(id, f.Seq)
	if limit := int(s.nc.MaxPayload()); limit > 0 && len(v)+len(subject)+headerRoom > limit {
		return nil, facts.Fact{}, fmt.Errorf("append to %s: the draft is a %d-byte message, larger than the server's max_payload of %d bytes: %w", id, len(v)+len(subject)+headerRoom, limit, ErrTooLarge)
	}
	m := &nats.Msg{Subject: subject, Data: v, Header: nats.Header{}}
	m.Header.Set(markerHeader, markerAfter)
	return m, f, nil
}

// publishOne publishes m (whose Header must not be nil) to the stream
// expecting its subject to be empty, and waits for the server's answer:
// nil, a *refusedError, or an error after which the outcome is unknown. As
// with a batch, once sent the wait is bounded by the store's timeout, not
// by ctx.
func (s *Store) publishOne(ctx context.Context, m *nats.Msg) error {
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	reply, err := s.nc.RequestMsgWithContext(wait, m)
	if err != nil {
		return fmt.Errorf("publish %s (the outcome is unknown: read the head): %w", m.Subject, err)
	}
	var ack pubAck
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return fmt.Errorf("publish %s: reply %q: %w", m.Subject, reply.Data, err)
	}
	if ack.Error != nil {
		return &refusedError{code: ack.Error.Code, errCode: ack.Error.ErrCode, description: ack.Error.Description}
	}
	if ack.Stream != s.name {
		return fmt.Errorf("publish %s: stored in stream %q, not %q", m.Subject, ack.Stream, s.name)
	}
	return nil
}
