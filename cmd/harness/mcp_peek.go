package main

import (
	"context"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/stock"
)

// Peek reads this workspace's store for harness mcp serve's
// subscriptions while other processes hold it (stock.Session.Peeker):
// opened only when its files changed, and closed at once.
func (w *mcpWorkspace) Peek(ctx context.Context) (drive.Peek, func(), error) {
	p, err := w.a.place()
	if err != nil {
		return nil, nil, err
	}
	s, err := w.a.newSession(p, w.f, stock.SessionOptions{Lenient: true})
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	if err := w.a.openStore(ctx, s); err != nil {
		return nil, nil, err
	}
	peek, done := s.Peeker()
	return peek, done, nil
}
