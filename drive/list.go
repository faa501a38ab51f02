package drive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/thread"
)

// ListOptions select the threads List gives. The zero value selects all.
type ListOptions struct {
	// Status keeps the threads of this status ("" for all).
	Status harness.Status
	// Root keeps the threads of the tree of this root thread: the root
	// and every child below it.
	Root string
	// Workspace keeps the threads that record this workspace (see
	// State.Workspace); a thread that records none counts as Default's.
	Workspace string
	// Default is the workspace of a thread that records none (a thread
	// that never ran a model turn): the caller's own.
	Default string
	// After and Limit page through the store's threads in id order: those
	// after the id After, at most Limit of them (0 for all). List's next
	// is the After of the next page.
	After string
	Limit int
	// Inspect, when set, reads a thread's state instead of opening it
	// (rt.Open) and calling Inspect: for a front end that keeps each
	// thread folded between calls.
	Inspect func(ctx context.Context, id string) (State, error)
}

// List reads the store's threads, each from its view (the state Inspect
// gives: its snapshot, and what was appended since — never a scan of its
// whole log), and returns those the options keep, in id order, and the
// After of the next page ("" when there is none). A child is read as its
// tree's actor folds it (harness.Runtime.Open). A thread whose state cannot
// be read is listed with State.Unreadable saying why, not left out and
// not an error for the whole list; only the context's end is.
func List(ctx context.Context, rt *harness.Runtime, actor harness.Actor, o ListOptions) (states []State, next string, err error) {
	if rt == nil || rt.Store == nil {
		return nil, "", errors.New("list threads: no store")
	}
	if o.Limit < 0 {
		return nil, "", fmt.Errorf("list threads: limit %d: want 0 (all) or more", o.Limit)
	}
	states = []State{}
	page := thread.ThreadsPage{After: o.After}
	if o.Limit > 0 {
		page.Limit = min(o.Limit, thread.DefaultPageLimit)
	}
	for {
		heads, err := rt.Store.Threads(ctx, page)
		if err != nil {
			return nil, "", fmt.Errorf("list threads: %w", err)
		}
		if len(heads) == 0 {
			return states, "", nil
		}
		for _, h := range heads {
			st, err := o.inspect(ctx, rt, actor, h.Thread)
			if err != nil {
				if ctx.Err() != nil {
					return nil, "", err
				}
				// One damaged thread does not hide the others: it is
				// listed as unreadable, with why.
				st = State{Thread: h.Thread, Head: h, Unreadable: present.EscapeLine(err.Error())}
			}
			if !o.keeps(st) {
				continue
			}
			states = append(states, st)
			if o.Limit > 0 && len(states) == o.Limit {
				return states, h.Thread, nil
			}
		}
		page.After = heads[len(heads)-1].Thread
	}
}

// inspect reads the state of the thread id, as the options say.
func (o ListOptions) inspect(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string) (State, error) {
	if o.Inspect != nil {
		return o.Inspect(ctx, id)
	}
	th, err := rt.Open(ctx, actor, id)
	if err != nil {
		return State{Thread: id}, err
	}
	return Inspect(ctx, th)
}

// keeps reports whether the options keep the state.
func (o ListOptions) keeps(st State) bool {
	if st.Unreadable != "" {
		// Its status, tree and workspace are unknown: kept unless
		// another tree is asked for.
		return o.Root == "" || st.Thread == o.Root
	}
	ws := st.Workspace
	if ws == "" {
		ws = o.Default
	}
	return (o.Status == "" || st.Status == o.Status) &&
		(o.Root == "" || st.Root == o.Root) &&
		(o.Workspace == "" || ws == o.Workspace)
}

// InTreeOrder orders states as their trees: each root in the order given,
// each child after its parent (and after its parent's earlier children's
// subtrees; children in id order), with how deep each stands. A child
// whose parent is not among the states stands as a root, and so do
// threads whose parents name each other.
func InTreeOrder(states []State) ([]State, []int) {
	byID := map[string]bool{}
	for _, st := range states {
		byID[st.Thread] = true
	}
	kids := map[string][]State{}
	var roots []State
	for _, st := range states {
		if st.Parent != "" && byID[st.Parent] {
			kids[st.Parent] = append(kids[st.Parent], st)
			continue
		}
		roots = append(roots, st)
	}
	out := make([]State, 0, len(states))
	depth := make([]int, 0, len(states))
	seen := map[string]bool{}
	var walk func(st State, d int)
	walk = func(st State, d int) {
		if seen[st.Thread] {
			return
		}
		seen[st.Thread] = true
		out = append(out, st)
		depth = append(depth, d)
		cs := kids[st.Thread]
		slices.SortStableFunc(cs, func(x, y State) int { return strings.Compare(x.Thread, y.Thread) })
		for _, c := range cs {
			walk(c, d+1)
		}
	}
	for _, st := range roots {
		walk(st, 0)
	}
	// Parents that name each other (spawn records written by hand) leave
	// no root to walk from: each stands as one, not left out.
	for _, st := range states {
		walk(st, 0)
	}
	return out, depth
}

// ErrNoThreads: the store has no thread (LastActive).
var ErrNoThreads = errors.New("no threads")

// LastActive is the store's thread active last (its last fact the
// latest; ties by id, the larger first, numbers as numbers) that is not
// a child: a child is resumed through its parent. A store with no thread
// is ErrNoThreads.
func LastActive(ctx context.Context, store thread.Store) (string, error) {
	var heads []thread.Head
	page := thread.ThreadsPage{}
	for {
		hs, err := store.Threads(ctx, page)
		if err != nil {
			return "", err
		}
		if len(hs) == 0 {
			break
		}
		heads = append(heads, hs...)
		page.After = hs[len(hs)-1].Thread
	}
	slices.SortStableFunc(heads, func(x, y thread.Head) int {
		if c := y.At.Compare(x.At); c != 0 {
			return c
		}
		return naturalCompare(y.Thread, x.Thread)
	})
	for _, h := range heads {
		root, err := harness.RootOf(ctx, store, h.Thread)
		if err != nil && !errors.Is(err, harness.ErrNotInTree) {
			return "", err
		}
		if root == h.Thread {
			return h.Thread, nil
		}
	}
	return "", ErrNoThreads
}

// naturalCompare orders ids with their numbers as numbers: t2 before t10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := unicode.IsDigit(rune(a[0])), unicode.IsDigit(rune(b[0]))
		if da && db {
			na, ra := leadingDigits(a)
			nb, rb := leadingDigits(b)
			x, _ := strconv.ParseUint(na, 10, 64)
			y, _ := strconv.ParseUint(nb, 10, 64)
			if c := cmp.Compare(x, y); c != 0 {
				return c
			}
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// ActiveFirst sorts states the one active last first (its head the
// latest), ties by id, numbers as numbers (t2 before t10): the order in
// which a person lists threads.
func ActiveFirst(states []State) {
	slices.SortStableFunc(states, func(x, y State) int {
		if c := y.Head.At.Compare(x.Head.At); c != 0 {
			return c
		}
		return naturalCompare(x.Thread, y.Thread)
	})
}
