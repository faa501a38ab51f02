package serve_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/serve"
)

// TestProgressKeepsCharactersWhole: a character split across two chunks
// of a command's output ("é" as \xc3 ending one read, \xa9 starting the
// next; "€" split in three) reaches the page's live stream and the API's
// whole, never as escaped bytes; another action's stream is its own.
func TestProgressKeepsCharactersWhole(t *testing.T) {
	f := newFixture(t, slowScript(t))
	f.start("t1")
	f.start("t2")
	for id, path := range map[string]string{"t1": "/t/t1/progress", "t2": "/api/threads/t2/progress"} {
		ctx, cancel := context.WithCancel(context.Background())
		resp, r := f.stream(ctx, path)
		ch := readProgress(t, r)
		time.Sleep(50 * time.Millisecond) // subscribed
		p := serve.ProgressOf(f.srv, id)
		for _, c := range []struct{ action, text string }{
			{"1-c", "caf\xc3"}, {"2-c", "other\n"}, {"1-c", "\xa9 \xe2"}, {"1-c", "\x82"}, {"1-c", "\xac ok\n"},
		} {
			p(drive.Event{Kind: drive.EventOutput, ActionID: c.action, Stream: "stdout", Text: c.text})
		}
		var got []string
		for len(got) < 5 {
			select {
			case l := <-ch:
				require.Equal(t, "progress", l.Type)
				got = append(got, l.Progress.ActionID+":"+l.Progress.Text)
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: got %q", path, got)
			}
		}
		require.Equal(t, []string{"1-c:caf", "2-c:other\n", "1-c:é ", "1-c:", "1-c:€ ok\n"}, got, path)
		cancel()
		resp.Body.Close()
	}
}

// TestProgressReplaysToALateStream: a stream opened in the middle of a
// command starts with its output so far (not the text of a turn already
// recorded), then goes on live; once the next turn starts, what came
// before is recorded and a new stream gets none of it.
func TestProgressReplaysToALateStream(t *testing.T) {
	f := newFixture(t, slowScript(t))
	f.start("t1")
	p := serve.ProgressOf(f.srv, "t1")
	p(drive.Event{Kind: drive.EventTurnStarted, Turn: 1})
	p(drive.Event{Kind: drive.EventText, Turn: 1, Text: "Running it."})
	p(drive.Event{Kind: drive.EventTurnEnded, Turn: 1})
	p(drive.Event{Kind: drive.EventOutput, ActionID: "1-c", Stream: "stdout", Text: "line1\n"})

	read := func(ctx context.Context, n int) []string {
		_, r := f.stream(ctx, "/t/t1/progress")
		ch := readProgress(t, r)
		var got []string
		for len(got) < n {
			select {
			case l := <-ch:
				got = append(got, string(l.Progress.Kind)+":"+l.Progress.Text)
			case <-time.After(time.Second):
				return got
			}
		}
		return got
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, r := f.stream(ctx, "/t/t1/progress")
	ch := readProgress(t, r)
	var first progressLine
	select {
	case first = <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the late stream got nothing of the output so far")
	}
	require.Equal(t, "output:line1\n", string(first.Progress.Kind)+":"+first.Progress.Text, "the output so far, first")
	p(drive.Event{Kind: drive.EventOutput, ActionID: "1-c", Stream: "stdout", Text: "line2\n"})
	next := <-ch
	require.Equal(t, "line2\n", next.Progress.Text, "then live")

	p(drive.Event{Kind: drive.EventTurnStarted, Turn: 2})
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	require.Empty(t, read(ctx2, 1), "recorded by now: nothing replayed")
}
