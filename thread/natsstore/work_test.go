package natsstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// takeAll takes jobs until want came or the deadline passed; with done,
// it finishes each as it comes.
func takeAll(t *testing.T, w *natsstore.Work, want int, done ...bool) []*natsstore.Job {
	t.Helper()
	var (
		mu  sync.Mutex
		got []*natsstore.Job
	)
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		require.NoError(t, w.Take(context.Background(), want-len(got), 200*time.Millisecond, func(j *natsstore.Job) {
			if len(done) > 0 && done[0] {
				require.NoError(t, j.Done())
			}
			mu.Lock()
			got = append(got, j)
			mu.Unlock()
		}))
	}
	require.Len(t, got, want)
	return got
}

// draft is a draft of kind with cause.
func draft(t *testing.T, kind facts.Kind, cause string, payload any) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(kind, cause, payload)
	require.NoError(t, err)
	return d
}

// The queue of work is the log: every append, in order, each told as
// ingress (posted from outside: the thread may be runnable) or not; a
// Work opened on a stream that holds threads starts at the first record.
func TestWorkIsEveryAppend(t *testing.T) {
	ctx := context.Background()
	srv := defaultServer(t)
	opts := freshStream()
	s := dial(t, srv, opts...)
	_, err := s.Append(ctx, "a.b", 0, draft(t, facts.KindUserMessage, facts.IngressCause("start"), facts.UserMessage{Text: "Hello"}))
	require.NoError(t, err)
	_, err = s.Append(ctx, "a.b", 1, draft(t, facts.KindModelTurn, "infer/turn/1", facts.ModelTurn{Turn: 1, Text: "Hi."}))
	require.NoError(t, err)

	w, err := s.Work(ctx)
	require.NoError(t, err)
	_, err = s.Append(ctx, "c", 0, draft(t, facts.KindUserMessage, facts.IngressCause("start"), facts.UserMessage{Text: "Again"}))
	require.NoError(t, err)

	jobs := takeAll(t, w, 3)
	type seen struct {
		Thread, Cause string
		Ingress       bool
	}
	var got []seen
	for _, j := range jobs {
		got = append(got, seen{j.Thread, j.Cause, j.Ingress})
		require.EqualValues(t, 1, j.Delivered)
		require.NoError(t, j.Done())
	}
	require.Equal(t, []seen{
		{"a.b", "ingress/start", true},
		{"a.b", "infer/turn/1", false},
		{"c", "ingress/start", true},
	}, got)
	require.Less(t, jobs[0].Seq, jobs[1].Seq)
	followed := func(j *natsstore.Job) bool {
		f, err := j.Followed(ctx)
		require.NoError(t, err)
		return f
	}
	require.True(t, followed(jobs[0]), "a.b's start was followed by its turn")
	require.False(t, followed(jobs[1]), "a.b's turn is its last record")
	require.False(t, followed(jobs[2]))
}

// A job given back, or left unfinished past the ack wait by a process
// that stopped answering for it, is given out again — to another process
// too; a finished one never is, and one worked on stays taken.
func TestWorkIsGivenAgain(t *testing.T) {
	ctx := context.Background()
	srv := defaultServer(t)
	opts := freshStream()
	s1, s2 := dial(t, srv, opts...), dial(t, srv, opts...)
	w1, err := s1.Work(ctx, natsstore.WithAckWait(time.Second))
	require.NoError(t, err)
	w2, err := s2.Work(ctx, natsstore.WithAckWait(time.Second))
	require.NoError(t, err)
	for _, id := range []string{"given-back", "abandoned", "kept"} {
		_, err := s1.Append(ctx, id, 0, draft(t, facts.KindUserMessage, facts.IngressCause("start"), facts.UserMessage{Text: id}))
		require.NoError(t, err)
	}
	first := map[string]*natsstore.Job{}
	for _, j := range takeAll(t, w1, 3) {
		first[j.Thread] = j
	}
	require.NoError(t, first["given-back"].Later(0))
	// "abandoned": nothing; "kept": worked on past the ack wait.
	stop := make(chan struct{})
	kept := make(chan error, 1)
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				kept <- first["kept"].Done()
				return
			case <-tick.C:
				if err := first["kept"].Working(); err != nil {
					kept <- err
					return
				}
			}
		}
	}()
	again := map[string]uint64{}
	for _, j := range takeAll(t, w2, 2, true) {
		again[j.Thread] = j.Delivered
	}
	require.Equal(t, map[string]uint64{"given-back": 2, "abandoned": 2}, again)
	close(stop)
	require.NoError(t, <-kept)

	// Nothing is left: a Take of the whole ack wait and more finds nothing.
	var late []string
	require.NoError(t, w2.Take(ctx, 10, 1500*time.Millisecond, func(j *natsstore.Job) { late = append(late, j.Thread) }))
	require.Empty(t, late)
}

func TestWorkRefusesABadAckWait(t *testing.T) {
	srv := defaultServer(t)
	s := dial(t, srv, freshStream()...)
	_, err := s.Work(context.Background(), natsstore.WithAckWait(0))
	require.ErrorContains(t, err, "ack wait 0s")
}
