package natsstore

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/thread"
)

// Appended calls fn with the thread of each append made to the store from
// now on — by this process or any other, on any machine — in the order
// the stream stored them, until ctx ends or the store closes. It is an
// ordered consumer of this process's own (not Work's shared one: every
// process that calls it sees every append), delivering each record's
// headers only. fn is called from one goroutine, one append at a time,
// and must not block for long. A consumer the server lost is made again
// from where it was; an append between the two may be missed, so a
// caller that must see every thread (a search index) compares heads now
// and then as well.
func (s *Store) Appended(ctx context.Context, fn func(id string)) error {
	if err := s.enter(); err != nil {
		return fmt.Errorf("follow %s: %w", s.name, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closing, cancel)
	defer stop()
	prefix := s.l.prefix + ".t."
	c, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{prefix + ">"},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		HeadersOnly:    true,
	})
	s.leave()
	if err != nil {
		return fmt.Errorf("follow %s: %w", s.name, err)
	}
	cc, err := c.Consume(func(m jetstream.Msg) {
		hexID, ok := strings.CutPrefix(m.Subject(), prefix)
		if !ok {
			return
		}
		raw, err := hex.DecodeString(hexID)
		if err != nil || thread.ValidateID(string(raw)) != nil {
			return
		}
		fn(string(raw))
	})
	if err != nil {
		return fmt.Errorf("follow %s: %w", s.name, err)
	}
	<-ctx.Done()
	cc.Stop()
	<-cc.Closed()
	return nil
}
