package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Threads are the store's threads o keeps (drive.List), the one active
// last first (ties by id, numbers as numbers), each child under its
// parent, with how deep each stands in its tree (drive.InTreeOrder).
func (s *Session) Threads(ctx context.Context, o drive.ListOptions) ([]drive.State, []int, error) {
	rt, _, err := s.Runtime()
	if err != nil {
		return nil, nil, err
	}
	rows, _, err := drive.List(ctx, rt, s.Stock.Actor, o)
	if err != nil {
		return nil, nil, err
	}
	drive.ActiveFirst(rows)
	rows, depth := drive.InTreeOrder(rows)
	return rows, depth, nil
}

// Reading is the view of the thread id as the session's actor folds it:
// its requests and actions (scheduler.Reading).
func (s *Session) Reading(ctx context.Context, id string) (scheduler.Reading, error) {
	rt, _, err := s.Runtime()
	if err != nil {
		return scheduler.Reading{}, err
	}
	return rt.Thread(s.Stock.Actor, id).Reading(ctx)
}
