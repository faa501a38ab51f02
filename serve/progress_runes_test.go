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
	for _, path := range []string{"/t/t1/progress", "/api/threads/t1/progress"} {
		ctx, cancel := context.WithCancel(context.Background())
		resp, r := f.stream(ctx, path)
		ch := readProgress(t, r)
		time.Sleep(50 * time.Millisecond) // subscribed
		p := serve.ProgressOf(f.srv, "t1")
		for _, c := range []struct{ action, text string }{
			{"1-c", "caf\xc3"}, {"2-c", "other\n"}, {"1-c", "\xa9 \xe2"}, {"1-c", "\x82"}, {"1-c", "\xac ok\n"},
		} {
			p(drive.Event{Kind: drive.EventOutput, Thread: "t1", ActionID: c.action, Stream: "stdout", Text: c.text})
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
