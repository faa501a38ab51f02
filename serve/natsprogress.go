package serve

import (
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// followNATS, for a server of a NATS store, shows the progress of the
// threads other processes drive on the store (workers: they publish it
// with natsstore.Store.Progress, see stock.PublishProgress) as it shows
// that of the threads it drives itself: natsstore.Store.FollowProgress
// takes a record only from the holder of the thread's lease now, and
// drive.DecodeEvent (in remoteProgress) only the events it knows. It
// follows until the server closes; a follow that cannot start is logged,
// and the server goes on without it (progress is never the record).
func (s *Server) followNATS() {
	var ns *natsstore.Store
	for _, st := range []thread.Store{s.opts.Store, s.opts.Store.Backing()} {
		if n, ok := st.(*natsstore.Store); ok {
			ns = n
			break
		}
	}
	if ns == nil {
		return
	}
	stop, err := ns.FollowProgress(s.ctx, remoteProgress{s.live})
	if err != nil {
		s.opts.Logf("serve: the live output of the threads other processes drive is not shown: %v", err)
		return
	}
	s.wg.Go(func() {
		<-s.ctx.Done()
		stop()
	})
}
