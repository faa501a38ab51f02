package serve

import (
	"errors"
	"time"

	"github.com/seed-7cc7a084/harness/search"
)

// The server keeps the store's search index up to date as threads are
// appended to through it (its runs, its socket's clients, and on a shared
// store the appends its poller sees): after a burst of appends settles
// (indexSettle), it opens the index, indexes the threads that moved from
// where the index left each (search.Index.UpdateThread), and closes it
// again, so that a harness search beside the server can open it. A search
// brings the index up to date itself in any case; this makes its update
// short. An index another process has open is tried again later.
const (
	indexSettle = 250 * time.Millisecond
	// maxMoved bounds the threads the hub collects for the indexer; past
	// it the next search's update does the rest.
	maxMoved = 10000
)

// indexAppends runs until the server closes.
func (s *Server) indexAppends() {
	defer s.wg.Done()
	for {
		changed := s.hub.anyChanged()
		if ids := s.hub.takeMoved(); len(ids) > 0 && !s.indexThreads(ids) {
			// Another process has the index: try again once it settles.
			s.hub.putMoved(ids)
			changed = nil
		}
		if changed != nil {
			select {
			case <-s.ctx.Done():
				return
			case <-changed:
			}
		}
		t := time.NewTimer(indexSettle)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// indexThreads brings the index up to date with the threads ids; false
// if another process has the index open.
func (s *Server) indexThreads(ids []string) bool {
	ix, err := s.opts.Stock.Place.OpenSearch(s.ctx, 0)
	if errors.Is(err, search.ErrLocked) {
		return false
	}
	if err != nil {
		if s.ctx.Err() == nil {
			s.opts.Logf("search index: %v", err)
		}
		return true
	}
	defer ix.Close()
	for _, id := range ids {
		if _, err := ix.UpdateThread(s.ctx, s.store, id); err != nil {
			if s.ctx.Err() == nil {
				s.opts.Logf("search index: %v", err)
			}
			break
		}
	}
	return true
}
