package stock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// On NATS, FollowSearch keeps this machine's index from the stream: facts
// another process appended — before it started, and while it runs — are
// in the index with no update by the searcher (Index.Search alone, which
// never indexes).
func TestFollowSearchIndexesOthersAppends(t *testing.T) {
	srv := natstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mine, err := natsstore.Dial(ctx, srv.ClientURL())
	require.NoError(t, err)
	defer mine.Close()
	theirs, err := natsstore.Dial(ctx, srv.ClientURL())
	require.NoError(t, err)
	defer theirs.Close()
	say := func(id, text string) {
		d, err := facts.NewDraft(facts.KindUserMessage, "test/"+id, facts.UserMessage{Text: text})
		require.NoError(t, err)
		_, err = theirs.Append(ctx, id, 0, d)
		require.NoError(t, err)
	}
	say("before", "the quokka was here first")

	p, err := stock.Locate(t.TempDir(), srv.ClientURL())
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { defer close(done); p.FollowSearch(ctx, mine, t.Logf) }()

	found := func(text string) int {
		q, err := search.Parse(text, time.Now())
		require.NoError(t, err)
		ix, err := p.OpenSearch(ctx, 5*time.Second)
		require.NoError(t, err)
		defer ix.Close()
		page, err := ix.Search(ctx, mine, q, search.Options{Limit: 50})
		require.NoError(t, err)
		return len(page.Hits)
	}
	// What was there before it started: its first round indexes all.
	require.Eventually(t, func() bool { return found("quokka") == 1 }, 10*time.Second, 50*time.Millisecond)
	// What is appended now: the stream tells it (its next whole round is
	// minutes away).
	for i := range 5 {
		say(fmt.Sprintf("t%d", i), fmt.Sprintf("a zanzibar note %d", i))
	}
	require.Eventually(t, func() bool { return found("zanzibar") == 5 }, 10*time.Second, 100*time.Millisecond)
	cancel()
	<-done
}
