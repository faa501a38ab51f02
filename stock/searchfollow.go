package stock

import (
	"context"
	"time"

	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// FollowSearch keeps the place's search index (on this machine) up to
// date with the NATS store ns as any process appends to it, until ctx
// ends: a search.Follower told of each append by the stream
// (natsstore.Store.Appended). It is what a worker on NATS runs beside
// its work, so that a harness search on its machine finds what every
// worker and person appended without indexing it first. Errors go to
// logf; it returns when ctx ends.
func (p Place) FollowSearch(ctx context.Context, ns *natsstore.Store, logf func(string, ...any)) {
	f := &search.Follower{
		Open:  func(ctx context.Context, wait time.Duration) (*search.Index, error) { return p.OpenSearch(ctx, wait) },
		Store: ns,
		Logf:  logf,
	}
	followSearch(ctx, f, ns, logf)
}

func followSearch(ctx context.Context, f *search.Follower, ns *natsstore.Store, logf func(string, ...any)) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := ns.Appended(ctx, f.Moved); err != nil && ctx.Err() == nil {
				if logf != nil {
					logf("search index: %v", err)
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
		}
	}()
	_ = f.Run(ctx)
	cancel()
	<-done
}
