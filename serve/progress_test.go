package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
)

// slowCommand prints its lines slowly, then a line of hostile markup and a
// terminal escape that would clear the screen, then runs a second more: its
// completion (a fact, on another stream) does not overtake its last line,
// which a page would then not show live (a busy machine took longer than
// the command's exit to deliver that line).
const slowCommand = `for i in 1 2 3; do echo line$i; sleep 0.4; done; echo '<script>alert(1)</script>'; printf '\033[2Jcleared\n'; sleep 1`

// slowScript is a model that runs slowCommand, then is done.
func slowScript(t testing.TB) string {
	args, err := json.Marshal(map[string]string{"command": slowCommand})
	require.NoError(t, err)
	turn, err := json.Marshal(map[string]any{
		"text":       "Running it.",
		"tool_calls": []map[string]string{{"id": "c", "name": "run_command", "args": string(args)}},
	})
	require.NoError(t, err)
	return string(turn) + "\n" + `{"text": "Done."}` + "\n"
}

// progressLine is one line of a progress stream's data.
type progressLine struct {
	Type      string       `json:"type"`
	Ephemeral bool         `json:"ephemeral"`
	Progress  *drive.Event `json:"progress"`
	Dropped   int          `json:"dropped"`
}

// readProgress reads the stream's events, each decoded, into a channel,
// until the stream ends.
func readProgress(t *testing.T, r *bufio.Reader) <-chan progressLine {
	ch := make(chan progressLine, 1024)
	go func() {
		defer close(ch)
		var name, data string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "" && name != "":
				var p progressLine
				if json.Unmarshal([]byte(data), &p) != nil || (name == "progress") != (p.Type == "progress") {
					p = progressLine{Type: "bad: " + name + " " + data}
				}
				ch <- p
				name, data = "", ""
			case strings.HasPrefix(line, "event: "):
				name = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			}
		}
	}()
	return ch
}

// outputUntil collects the command output of the stream until it holds
// want, and reports whether the action had completed by then.
func outputUntil(t *testing.T, f *fixture, ch <-chan progressLine, want string) (string, bool) {
	t.Helper()
	var out strings.Builder
	timeout := time.After(20 * time.Second)
	for {
		select {
		case p, ok := <-ch:
			require.True(t, ok, "the stream ended; output so far %q", out.String())
			require.Equal(t, "progress", p.Type)
			require.True(t, p.Ephemeral)
			if p.Progress.Kind != drive.EventOutput {
				continue
			}
			require.Equal(t, "t1", p.Progress.Thread)
			require.Equal(t, "stdout", p.Progress.Stream)
			require.NotEmpty(t, p.Progress.ActionID)
			out.WriteString(p.Progress.Text)
			if strings.Contains(out.String(), want) {
				return out.String(), count(f.kinds("t1"), facts.KindActionCompleted) > 0
			}
		case <-timeout:
			t.Fatalf("no %q in the output; so far %q", want, out.String())
		}
	}
}

// TestProgressStream: while the server drives a thread, a command's
// output reaches GET /api/threads/ID/progress line by line, before the
// action's completion is recorded, in stream-json's progress lines with
// the text raw (markup and escapes are data in JSON); the page's stream
// has the same text escaped as a terminal shows it. The recorded output
// is the whole of it, as always.
func TestProgressStream(t *testing.T) {
	f := newFixture(t, slowScript(t))
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, r := f.stream(ctx, "/api/threads/t1/progress")
	defer resp.Body.Close()
	api := readProgress(t, r)
	presp, pr := f.stream(ctx, "/t/t1/progress")
	defer presp.Body.Close()
	page := readProgress(t, pr)

	d := f.detail("t1")
	_, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, true, true))
	require.Contains(t, string(b), `"resuming": true`)

	out, completed := outputUntil(t, f, api, "line1\n")
	require.False(t, completed, "line1 came only after the action completed: %q", out)
	out, _ = outputUntil(t, f, api, "cleared")
	require.Contains(t, out, "line2\nline3\n<script>alert(1)</script>\n\x1b[2Jcleared", "the API gives the text raw")

	pout, _ := outputUntil(t, f, page, "cleared")
	require.NotContains(t, pout, "\x1b", "the page's text has no terminal escape")
	require.Contains(t, pout, `<script>alert(1)</script>`+"\n"+`\x1b[2Jcleared`, "escaped as the terminal shows it")

	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	c, err := facts.Decode[facts.ActionCompleted](f.last("t1", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Equal(t, "succeeded", string(c.Report.Status))
	require.Contains(t, c.Report.Stdout, "line1\nline2\nline3\n", "the record keeps the whole output")
}

// TestProgressRefused: the progress stream is the API's: without a token,
// or with one the server does not know, it is refused; an unknown thread
// is 404.
func TestProgressRefused(t *testing.T) {
	f := newFixture(t, slowScript(t))
	f.start("t1")
	for _, hdr := range [][]string{{"Authorization", ""}, {"Authorization", "Bearer nope"}} {
		resp, b := f.do("GET", "/api/threads/t1/progress", "", hdr...)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, string(b))
		require.NotEqual(t, "text/event-stream", resp.Header.Get("Content-Type"))
		resp, b = f.do("GET", "/t/t1/progress", "", hdr...)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, string(b))
	}
	resp, b := f.do("GET", "/api/threads/nope/progress", "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(b))
}

// TestPageShowsLiveOutput: in a real browser, on the page mounted under a
// path prefix, a command's output appears line by line while it runs,
// before its completion is recorded; markup in it is text (no element is
// made of it) and a terminal escape is shown escaped; the box goes when
// the action's completion arrives.
func TestPageShowsLiveOutput(t *testing.T) {
	f := newFixture(t, slowScript(t))
	f.start("t1")
	mux := http.NewServeMux()
	mux.Handle("/x/", http.StripPrefix("/x", f.srv.Handler()))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close) // after the browser is gone (cleanups run last first)
	base := hs.URL + "/x"

	ctx := newBrowser(t, 40*time.Second)
	type css = chromedp.CSS
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/t/t1?token="+token),
		chromedp.WaitVisible(css(`button.approve`)),
		chromedp.WaitVisible(css(`body.live.following`)),
		chromedp.Click(css(`button.approve`)),
	))
	// The first line, while the command still runs.
	const liveText = `(document.querySelector("#live pre.live-text") || {}).textContent || ""`
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](liveText))
		require.NoError(t, err)
		if strings.Contains(got, "line1") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Zero(t, count(f.kinds("t1"), facts.KindActionCompleted), "line1 shown only after the action completed")

	// The hostile lines, as text. The box may go as soon as the command
	// ends: the script below keeps what it showed last.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise((resolve) => {
		const seen = () => { const p = document.querySelector("#live pre.live-text"); return p ? p.textContent : null; };
		let last = seen() || "";
		const tick = () => {
			const now = seen();
			if (now !== null) last = now;
			if (now === null || last.includes("cleared")) resolve(last); else setTimeout(tick, 5);
		};
		tick();
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Contains(t, shown, "line2\nline3\n<script>alert(1)</script>\n"+`\x1b[2Jcleared`)
	scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#live script").length`))
	require.NoError(t, err)
	require.Zero(t, scripts, "markup in the output made an element")

	// Cleared when the completion arrives.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(css(`#timeline tr.kind-action-completed`)),
		chromedp.WaitNotPresent(css(`#live pre.live-text`)),
		chromedp.WaitNotVisible(css(`#live`)),
	))
}

// TestProgressSlowClient: a client that does not read holds up nothing:
// the run's events are handed over at once however many there are; the
// client gets what fit in its stream's bounded buffer, then an event
// "dropped" saying how many did not — together every event, once.
func TestProgressSlowClient(t *testing.T) {
	f := newFixture(t, slowScript(t))
	f.start("t1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, r := f.stream(ctx, "/api/threads/t1/progress")
	defer resp.Body.Close()
	r.ReadString('\n') // the stream is open: its retry line

	p := serve.ProgressOf(f.srv, "t1")
	const n, size = 2000, 16 << 10
	chunk := strings.Repeat("x", size-1) + "\n"
	began := time.Now()
	for i := range n {
		p(drive.Event{Kind: drive.EventOutput, Thread: "t1", ActionID: "1-c", Stream: "stdout", Text: chunk[:size-len(strconv.Itoa(i))] + strconv.Itoa(i)})
	}
	took := time.Since(began)
	t.Logf("%d events of %d KiB handed over in %v with the client not reading", n, size>>10, took)
	// Idle this takes tens of milliseconds; a run that waited for the
	// client would wait for ever (it reads only below). The bound is for a
	// loaded CI machine under the race detector.
	require.Less(t, took, 20*time.Second, "the run waited for the client")

	got, dropped, last := 0, 0, -1
	ch := readProgress(t, r)
	timeout := time.After(20 * time.Second)
	for got+dropped < n {
		select {
		case l, ok := <-ch:
			require.True(t, ok, "the stream ended at %d sent, %d dropped", got, dropped)
			switch l.Type {
			case "dropped":
				require.Positive(t, l.Dropped)
				require.True(t, l.Ephemeral)
				dropped += l.Dropped
			case "progress":
				i, err := strconv.Atoi(strings.TrimLeft(l.Progress.Text, "x\n"))
				require.NoError(t, err)
				require.Greater(t, i, last, "in order, each once")
				last = i
				got++
			default:
				t.Fatalf("unexpected %q", l.Type)
			}
		case <-timeout:
			t.Fatalf("%d sent, %d dropped of %d", got, dropped, n)
		}
	}
	require.Equal(t, n, got+dropped)
	require.Positive(t, dropped, "nothing was dropped: the buffer is not bounded")
	t.Logf("sent %d, dropped %d", got, dropped)
}

// BenchmarkProgressFanout is what handing one command output event to 10
// open progress streams costs the run (the streams read and send it on
// their own goroutines), against the raw baseline of writing the event's
// stream-json line, as -o stream-json does for each event.
func BenchmarkProgressFanout(b *testing.B) {
	f := newFixtureTB(b, slowScript(b))
	f.start("t1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 10 {
		req, err := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/threads/t1/progress", nil)
		require.NoError(b, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := f.http.Client().Do(req)
		require.NoError(b, err)
		defer resp.Body.Close()
		go io.Copy(io.Discard, resp.Body)
	}
	e := drive.Event{Kind: drive.EventOutput, Thread: "t1", ActionID: "1-c", Stream: "stdout", Text: strings.Repeat("a line of output\n", 8)}
	p := serve.ProgressOf(f.srv, "t1")
	measure := func(fn func()) time.Duration {
		began := time.Now()
		for range b.N {
			fn()
		}
		return time.Since(began)
	}
	b.ResetTimer()
	var line []byte
	raw := measure(func() {
		line, _ = drive.AppendProgressLine(line[:0], e)
		io.Discard.Write(line)
	})
	fan := measure(func() { p(e) })
	b.ReportMetric(float64(raw.Nanoseconds())/float64(b.N), "ns/raw-line")
	b.ReportMetric(float64(fan.Nanoseconds())/float64(b.N), "ns/fanout-10")
	b.ReportMetric(float64(fan)/float64(raw), "ratio")
}
