package natsstore

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
)

// AppendFactOnly appends d after the head as a one-draft Append would, and
// stops there, as a writer that died between the fact and its cause's
// marker would have.
func AppendFactOnly(ctx context.Context, s *Store, id string, d facts.Draft) error {
	head, err := s.settledHead(ctx, id)
	if err != nil {
		return err
	}
	if err := s.duplicate(ctx, id, []string{d.Cause}); err != nil {
		return err
	}
	m, _, err := s.single(id, head, d)
	if err != nil {
		return err
	}
	return s.publishOne(ctx, m)
}

// The header of a fact appended alone, its marker after it.
const MarkerHeader, MarkerAfter = markerHeader, markerAfter

// FactSubject is the subject of the fact of id at seq in s's stream.
func FactSubject(s *Store, id string, seq uint64) string { return s.l.factSubject(id, seq) }

// ConnOptions returns the options of the connection s uses.
func ConnOptions(s *Store) nats.Options { return s.nc.Opts }

// SetWallClock makes the holders of s's leases read the wall clock from
// now. Call it before Lease.
func SetWallClock(s *Store, now func() time.Time) { s.wall = now }

// InterceptGets makes every get of s pass through f, which is given the
// subject and what the server answered, and returns what s sees. Call it
// before using s.
func InterceptGets(s *Store, f func(subject string, m *jetstream.RawStreamMsg, err error) (*jetstream.RawStreamMsg, error)) {
	s.stream = interceptedStream{s.stream, f}
}

type interceptedStream struct {
	jetstream.Stream
	f func(string, *jetstream.RawStreamMsg, error) (*jetstream.RawStreamMsg, error)
}

func (s interceptedStream) GetLastMsgForSubject(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	m, err := s.Stream.GetLastMsgForSubject(ctx, subject)
	return s.f(subject, m, err)
}
