package thread

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
)

// SpawnOf reads a thread's first fact: its spawn record, and true, when
// it is a child (see harness.Delegate).
func SpawnOf(ctx context.Context, store Store, id string) (facts.ThreadSpawned, bool, error) {
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return facts.ThreadSpawned{}, false, fmt.Errorf("read %s: %w", id, err)
		}
		if f.Kind != facts.KindThreadSpawned {
			return facts.ThreadSpawned{}, false, nil
		}
		p, err := facts.Decode[facts.ThreadSpawned](f)
		if err != nil {
			return p, false, fmt.Errorf("thread %s: %w", id, err)
		}
		return p, true, nil
	}
	return facts.ThreadSpawned{}, false, nil
}
