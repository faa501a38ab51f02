package natsstore

import (
	"context"

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
