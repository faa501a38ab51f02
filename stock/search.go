package stock

import (
	"context"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/search"
)

// Search is a search of the session's threads: drive.SearchOptions, and
// how the index is brought up to date first.
type Search struct {
	drive.SearchOptions
	// Reindex builds the index again from the logs before searching.
	Reindex bool
	// Wait bounds the wait for the index another process holds (at
	// least search.DefaultWait).
	Wait time.Duration
}

// Search finds the facts query names across the session's threads
// (drive.Search): every hit read back from its log. The index is brought
// up to date first, or with o.Reindex built again from the logs; stats
// then say what it indexed. An empty query with o.Reindex only builds
// the index (the result is empty).
func (s *Session) Search(ctx context.Context, query string, o Search) (res drive.SearchResult, stats *search.Stats, err error) {
	if s.Store == nil {
		return res, nil, ErrSessionClosed
	}
	wait := max(o.Wait, search.DefaultWait)
	var ix *search.Index
	if o.Reindex {
		var st search.Stats
		if ix, st, err = search.Rebuild(ctx, s.Place.SearchDir(), wait, s.Store); err != nil {
			return res, nil, err
		}
		stats = &st
	} else if ix, err = s.Place.OpenSearch(ctx, wait); err != nil {
		return res, nil, err
	}
	defer ix.Close()
	if query == "" && o.Reindex {
		return res, stats, nil
	}
	rt, _, err := s.Runtime()
	if err != nil {
		return res, stats, err
	}
	res, err = drive.Search(ctx, rt, s.Stock.Actor, ix, query, o.SearchOptions)
	return res, stats, err
}
