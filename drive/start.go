package drive

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// numbered is the form of the ids NextID gives.
var numbered = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^t([0-9]+)$`) }) // at first use, not at start-up

// NextID is t<N+1> for the largest t<N> among the store's threads (t1 in
// a store with none).
func NextID(ctx context.Context, store thread.Store) (string, error) {
	n := 0
	page := thread.ThreadsPage{}
	for {
		heads, err := store.Threads(ctx, page)
		if err != nil {
			return "", err
		}
		if len(heads) == 0 {
			return "t" + strconv.Itoa(n+1), nil
		}
		for _, h := range heads {
			if m := numbered().FindStringSubmatch(h.Thread); m != nil {
				if k, err := strconv.Atoi(m[1]); err == nil && k > n {
					n = k
				}
			}
		}
		page.After = heads[len(heads)-1].Thread
	}
}

// StartNext starts a new thread with the message under the next free id
// (NextID), and resumes it: harness.Thread.Start of that id. When
// another process (on a store several share) starts the id it picked
// first, it takes the next one, so two machines never start one thread
// with two prompts. picked, when set, is told each id before it is tried,
// with the id taken meanwhile by another ("" the first time); also are
// appended with the message (harness.Thread.Start). It returns
// the thread, kept folded, and how its Resume ended.
func StartNext(ctx context.Context, rt *harness.Runtime, actor harness.Actor, message string, picked func(id, taken string), also ...harness.Ingress) (*harness.Thread, harness.Outcome, error) {
	return StartNextMessage(ctx, rt, actor, facts.UserMessage{Text: message}, picked, also...)
}

// StartNextMessage is StartNext with the whole user message
// (harness.Thread.StartMessage): one made from an MCP server's prompt.
func StartNextMessage(ctx context.Context, rt *harness.Runtime, actor harness.Actor, m facts.UserMessage, picked func(id, taken string), also ...harness.Ingress) (*harness.Thread, harness.Outcome, error) {
	var out harness.Outcome
	th, err := startNext(ctx, rt, actor, picked, func(th *harness.Thread) (err error) {
		out, err = th.StartMessage(ctx, m, also...)
		return err
	})
	return th, out, err
}

// SubmitNext is StartNext without the Resume: it starts a new thread with
// the message under the next free id (harness.Thread.Submit) and runs
// nothing, leaving the thread for a worker; also are appended with the
// message, as Submit does.
func SubmitNext(ctx context.Context, rt *harness.Runtime, actor harness.Actor, message string, picked func(id, taken string), also ...harness.Ingress) (*harness.Thread, error) {
	return startNext(ctx, rt, actor, picked, func(th *harness.Thread) error {
		_, err := th.Submit(ctx, message, also...)
		return err
	})
}

// startNext starts the thread of the next free id with start, taking the
// next one while another process takes the one it picked.
func startNext(ctx context.Context, rt *harness.Runtime, actor harness.Actor, picked func(id, taken string), start func(*harness.Thread) error) (*harness.Thread, error) {
	taken := ""
	for {
		id, err := NextID(ctx, rt.Store)
		if err != nil {
			return nil, err
		}
		if picked != nil {
			picked(id, taken)
		}
		th := rt.Thread(actor, id)
		err = start(th)
		if !errors.Is(err, harness.ErrThreadExists) {
			return th, err
		}
		taken = id
	}
}
