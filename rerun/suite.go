package rerun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/search"
)

// SuiteOptions say which threads a suite reruns, on what, how many at
// once.
type SuiteOptions struct {
	// Options is every rerun's (From and As are each thread's).
	Options
	// Threads are the threads to rerun, in order.
	Threads []string
	// Concurrency is how many reruns run at once; below 1 is 1.
	Concurrency int
	// OnRow, when set, is told of each rerun as it ends (from one
	// goroutine at a time, in the order they end).
	OnRow func(Row)
}

// Row is one thread of a suite.
type Row struct {
	Thread string `json:"thread"`
	// Rerun is the rerun's thread id.
	Rerun string `json:"rerun"`
	// Again is set when the rerun existed before this suite ran: it was
	// resumed, or found ended, not begun anew.
	Again  bool    `json:"again,omitempty"`
	Report *Report `json:"report,omitempty"`
	// Err says why the thread could not be rerun.
	Err string `json:"error,omitempty"`
}

// Suite reruns each thread of o.Threads under one key, at most
// o.Concurrency at once, and returns a row for each, in the order given.
// A thread whose rerun under the key exists already is not rerun again:
// the rerun is resumed where it was (an ended one runs nothing), so a
// suite stopped midway and run again reruns none twice. A thread that
// cannot be rerun is a row with its error; the suite goes on.
func Suite(ctx context.Context, o SuiteOptions) ([]Row, error) {
	if o.Runtime == nil {
		return nil, errors.New("rerun suite: no runtime")
	}
	key := KeyOf(o.Options)
	rows := make([]Row, len(o.Threads))
	n := max(o.Concurrency, 1)
	sem := make(chan struct{}, n)
	var (
		wg sync.WaitGroup
		mu sync.Mutex // guards the calls of OnRow
	)
	for i, id := range o.Threads {
		if err := ctx.Err(); err != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			row := Row{Thread: id, Rerun: ID(id, key)}
			if _, err := o.Runtime.Store.Head(ctx, row.Rerun); err == nil {
				row.Again = true
			}
			one := o.Options
			one.From, one.As = id, ""
			rep, err := Run(ctx, one)
			if err != nil {
				row.Err = err.Error()
			} else {
				row.Report = rep
			}
			rows[i] = row
			if o.OnRow != nil {
				mu.Lock()
				o.OnRow(row)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return rows, fmt.Errorf("rerun suite: %w", err)
	}
	return rows, nil
}

// Select returns the threads of rt's store to rerun, in id order: those
// of the status given ("" for all), reruns and child threads left out —
// a suite run again must not rerun its own results.
func Select(ctx context.Context, rt *harness.Runtime, actor harness.Actor, status harness.Status) ([]string, error) {
	states, _, err := drive.List(ctx, rt, actor, drive.ListOptions{Status: status})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, st := range states {
		if st.Parent != "" {
			continue
		}
		ok, err := original(ctx, rt, st.Thread)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, st.Thread)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Find returns the threads a search query finds in rt's store (see
// drive.Search), in id order, reruns left out.
func Find(ctx context.Context, rt *harness.Runtime, actor harness.Actor, ix *search.Index, query string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	cursor := ""
	for {
		res, err := drive.Search(ctx, rt, actor, ix, query, drive.SearchOptions{Cursor: cursor, Limit: 100})
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			if seen[h.Thread] {
				continue
			}
			seen[h.Thread] = true
			ok, err := original(ctx, rt, h.Thread)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, h.Thread)
			}
		}
		if res.Next == "" {
			break
		}
		cursor = res.Next
	}
	slices.Sort(out)
	return out, nil
}

// original reports whether thread id is no rerun.
func original(ctx context.Context, rt *harness.Runtime, id string) (bool, error) {
	r, err := Read(ctx, rt.Store, id)
	if err != nil {
		return false, err
	}
	return r.Rerun == nil, nil
}
