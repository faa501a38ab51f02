package drive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/search"
)

// SearchResult is the one document of a search (package search), as
// every front end gives it: the command line's -o json and the HTTP API
// encode it as it is.
type SearchResult struct {
	// Query is the query as written.
	Query string `json:"query"`
	// Hits are the facts found, newest first, each read from its log and
	// checked there before it is given.
	Hits []SearchHit `json:"hits"`
	// Next is the cursor of the next page; "" after the last.
	Next string `json:"next,omitempty"`
	// Dropped counts what the index named and the log did not confirm:
	// left out. Many say the index should be rebuilt.
	Dropped int `json:"dropped,omitempty"`
	// Indexed is what bringing the index up to date before the search
	// indexed.
	Indexed search.Stats `json:"indexed"`
}

// SearchHit is one fact found.
type SearchHit struct {
	Thread string     `json:"thread"`
	Seq    uint64     `json:"seq"`
	Kind   facts.Kind `json:"kind"`
	At     time.Time  `json:"at"`
	// Hash is the fact's hash, as read from the log.
	Hash facts.Hash `json:"hash"`
	// Excerpt is a line that shows why the fact matched, escaped for a
	// terminal (see search.Excerpt).
	Excerpt string `json:"excerpt"`
}

// SearchOptions page through a search.
type SearchOptions struct {
	// Limit and Cursor page (see search.Options).
	Limit  int
	Cursor string
	// Now is when since: and until: durations count back from; zero is
	// the present.
	Now time.Time
	// Inspect, when set, reads a thread's state, for status: (see
	// ListOptions.Inspect).
	Inspect func(ctx context.Context, id string) (State, error)
}

// Statuses are the values a search's status: may take.
var Statuses = []string{string(harness.StatusDone), string(harness.StatusParked), string(harness.StatusFailed),
	string(harness.StatusStopped), string(harness.StatusResumable), string(StatusRunning)}

// Search finds the facts of rt's store that match the query text (see
// search.Parse), newest first: it brings ix up to date with the store
// (search.Index.Update), then reads a page of hits, each confirmed by
// its log. status: keeps the threads whose state (Inspect, read as
// actor folds it) has that status; the status read of a thread is left
// in the index as a hint for the next search while the thread stays at
// that head (search.Index.SetStatusHint), and a thread whose hits are
// shown on a hint's word is folded first to confirm it. A query that does not parse is a
// *search.QueryError (search.ErrQuery).
func Search(ctx context.Context, rt *harness.Runtime, actor harness.Actor, ix *search.Index, text string, o SearchOptions) (SearchResult, error) {
	if rt == nil || rt.Store == nil || ix == nil {
		return SearchResult{}, errors.New("search: no store or no index")
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	q, err := search.Parse(text, now, Statuses...)
	if err != nil {
		return SearchResult{}, err
	}
	stats, err := ix.Update(ctx, rt.Store)
	if err != nil {
		return SearchResult{}, err
	}
	so := search.Options{Limit: o.Limit, Cursor: o.Cursor}
	lo := ListOptions{Inspect: o.Inspect}
	status := func(ctx context.Context, id string) (string, error) {
		st, err := lo.inspect(ctx, rt, actor, id)
		if err != nil {
			return "", fmt.Errorf("search: status of %s: %w", id, err)
		}
		// Left for the next search, while the thread stays at this head
		// (an index that cannot keep it only costs the next a fold).
		_ = ix.SetStatusHint(id, st.Head, string(st.Status))
		return string(st.Status), nil
	}
	hinted := map[string]bool{} // threads kept on the index's word alone
	if q.Status != "" {
		so.Keep = func(ctx context.Context, id string) (bool, error) {
			if s, ok := ix.StatusHint(id); ok {
				hinted[id] = s == q.Status
				return s == q.Status, nil
			}
			s, err := status(ctx, id)
			return s == q.Status, err
		}
	}
	page, err := ix.Search(ctx, rt.Store, q, so)
	if err != nil {
		return SearchResult{}, err
	}
	// A thread kept on a hint is read by the fold before its hits are
	// shown: a hint the log does not bear out drops them.
	confirmed := map[string]bool{}
	kept := page.Hits[:0]
	for _, h := range page.Hits {
		id := h.Fact.Thread
		if hinted[id] {
			ok, seen := confirmed[id]
			if !seen {
				s, err := status(ctx, id)
				if err != nil {
					return SearchResult{}, err
				}
				ok = s == q.Status
				confirmed[id] = ok
			}
			if !ok {
				page.Dropped++
				continue
			}
		}
		kept = append(kept, h)
	}
	page.Hits = kept
	res := SearchResult{Query: text, Hits: make([]SearchHit, 0, len(page.Hits)), Next: page.Next, Dropped: page.Dropped, Indexed: stats}
	for _, h := range page.Hits {
		res.Hits = append(res.Hits, SearchHit{Thread: h.Fact.Thread, Seq: h.Fact.Seq, Kind: h.Fact.Kind, At: h.Fact.At,
			Hash: h.Hash, Excerpt: search.Excerpt(h.Fact, q)})
	}
	return res, nil
}
