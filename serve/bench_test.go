package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// message is a user message draft with a cause of its own.
func message(tb testing.TB, i int) facts.Draft {
	d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("ingress/m-%d", i), facts.UserMessage{Text: "a fact of a hundred bytes or so, as a short message to the model would be"})
	require.NoError(tb, err)
	return d
}

// BenchmarkStreamFanout is facts per second to a live stream with 50
// watchers: each op appends one fact, and it is done once all 50 streams
// have it. The baseline is the same appends to the raw Pebble store with
// nobody watching; ratio is the served rate over the raw one.
func BenchmarkStreamFanout(b *testing.B) {
	const watchers = 50
	f := newFixtureTB(b, harnesstest.ToolScript)
	ctx := context.Background()
	store := f.srv.Store()
	_, err := store.Append(ctx, "fan", 0, message(b, -1))
	require.NoError(b, err)

	// Raw: the appends alone, on a store of their own.
	raw, err := thread.OpenPebble(b.TempDir())
	require.NoError(b, err)
	defer raw.Close()
	rawStart := time.Now()
	var after uint64
	for i := range b.N {
		h, err := raw.Append(ctx, "fan", after, message(b, i))
		require.NoError(b, err)
		after = h.Seq
	}
	rawRate := float64(b.N) / time.Since(rawStart).Seconds()

	// Served: 50 streams, each counting the facts it is sent.
	want := uint64(b.N + 1)
	var ready, done sync.WaitGroup
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr := &http.Transport{MaxConnsPerHost: watchers + 4, MaxIdleConnsPerHost: watchers + 4}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for range watchers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			req, _ := http.NewRequestWithContext(sctx, "GET", f.http.URL+"/api/threads/fan/stream", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := client.Do(req)
			if err != nil {
				ready.Done()
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 64<<10)
			first := true
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if seq, ok := strings.CutPrefix(line, "id: "); ok {
					if first {
						ready.Done()
						first = false
					}
					if strings.TrimSpace(seq) == fmt.Sprint(want) {
						return
					}
				}
			}
		}()
	}
	ready.Wait()
	b.ResetTimer()
	start := time.Now()
	after = 1
	for i := range b.N {
		h, err := store.Append(ctx, "fan", after, message(b, i))
		require.NoError(b, err)
		after = h.Seq
	}
	done.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	served := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(served, "facts/s")
	b.ReportMetric(served*watchers, "deliveries/s")
	b.ReportMetric(rawRate, "raw-appends/s")
	b.ReportMetric(served/rawRate, "ratio")
}

// BenchmarkApprovalToToolStart is the time from an approval posted to
// the server to the tool starting (action.started appended), with the
// server's resume: the model loaded, an observer made, the observation
// before. The baseline is the same in one process without the server: the
// answer posted with drive.PostAnswer, then Resume; ratio is the server's
// over it.
func BenchmarkApprovalToToolStart(b *testing.B) {
	f := newFixtureTB(b, harnesstest.ToolScript)
	ctx := context.Background()
	var served, direct time.Duration
	for i := range b.N {
		b.StopTimer()
		id := fmt.Sprintf("s%d", i)
		f.start(id)
		d := f.detail(id)
		// Put cache.toml back, so that each write changes it.
		require.NoError(b, os.WriteFile(filepath.Join(f.root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
		b.StartTimer()
		t0 := time.Now()
		resp, body := f.do("POST", "/api/threads/"+id+"/answer", approveBody(d, true, true))
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("answer: %d %s", resp.StatusCode, body)
		}
		started := f.waitStarted(id)
		served += started.Sub(t0)
		b.StopTimer()
		f.waitFor(id, "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })

		// Direct, on the same store.
		id = fmt.Sprintf("d%d", i)
		f.start(id)
		require.NoError(b, os.WriteFile(filepath.Join(f.root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
		m, err := stock.LoadModel(f.script)
		require.NoError(b, err)
		svc, err := f.stock.Services(m, stock.BlobsOf(f.store))
		require.NoError(b, err)
		rt, err := harness.NewRuntime(f.store, svc, f.stock.Config)
		require.NoError(b, err)
		th := rt.Thread(f.stock.Actor, id)
		st, err := drive.Inspect(ctx, th)
		require.NoError(b, err)
		ans, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: st.Waits[0].RequestID, Approved: true, By: "ana", Digest: st.Waits[0].Digest})
		require.NoError(b, err)
		t0 = time.Now()
		_, err = drive.PostAnswer(ctx, th, ans, drive.AnswerKey(facts.KindConfirmationAnswered, st.Waits[0].RequestID))
		require.NoError(b, err)
		_, err = th.Resume(ctx)
		require.NoError(b, err)
		direct += f.last(id, facts.KindActionStarted).At.Sub(t0)
		svc.Observer.(interface{ Close() error }).Close()
		b.StartTimer()
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Millisecond) }
	b.ReportMetric(ms(served), "ms-to-start")
	b.ReportMetric(ms(direct), "direct-ms")
	b.ReportMetric(float64(served)/float64(direct), "ratio")
}

// BenchmarkMemory1000Threads is the memory a server holds for 1,000
// parked threads, once it has listed them all (it keeps each one's fold):
// heap in use after a collection, before and after. The baseline is the
// 1,000 folds alone, each kept by a harness.Thread in a slice; ratio is
// the server's over them. ms-list is one listing of the 1,000 once warm.
func BenchmarkMemory1000Threads(b *testing.B) {
	const n = 1000
	f := newFixtureTB(b, harnesstest.ToolScript)
	ctx := context.Background()
	f.start("t0")
	// Forks of a parked thread: 1,000 parked threads, made by 16 writers
	// at once (their synced appends commit together).
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + w; i < n; i += 16 {
				if _, err := rewind.Fork(ctx, f.store, "t0", 5, fmt.Sprintf("t%d", i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var held, bare uint64
	var list time.Duration
	for range b.N {
		base := heap()
		folds := make([]*harness.Thread, 0, n)
		rt, err := harness.NewRuntime(f.store, harness.Services{Tools: f.stock.Toolbox}, f.stock.Config)
		require.NoError(b, err)
		for i := range n {
			th := rt.Thread(f.stock.Actor, fmt.Sprintf("t%d", i))
			_, err := drive.Inspect(ctx, th)
			require.NoError(b, err)
			folds = append(folds, th)
		}
		bare += heap() - base
		runtime.KeepAlive(folds)
		folds = nil

		base = heap()
		g := newFixtureOn(b, f)
		resp, body := g.do("GET", "/api/threads?limit=2000", "")
		require.Equal(b, http.StatusOK, resp.StatusCode, string(body[:min(len(body), 200)]))
		t0 := time.Now()
		resp, _ = g.do("GET", "/api/threads?limit=2000", "")
		list += time.Since(t0)
		require.Equal(b, http.StatusOK, resp.StatusCode)
		held += heap() - base
		runtime.KeepAlive(g)
		g.close()
	}
	b.ReportMetric(float64(held)/float64(b.N)/(1<<20), "MiB-held")
	b.ReportMetric(float64(held)/float64(b.N)/n, "B/thread")
	b.ReportMetric(float64(list)/float64(b.N)/float64(time.Millisecond), "ms-list")
	b.ReportMetric(float64(held)/float64(bare), "ratio")
}

// BenchmarkPanel asks for the thread page's panel (GET /t/{id}/panel: the
// status, what waits, the verdict on the record) of a parked thread of
// 10,000 facts and of one of 100, in one store, alternating op by op, each
// asked once before the timer starts (as a page asks again after each new
// fact). ratio is the panel's time at 10,000 facts over its time at 100
// (aim: ≤ 2).
func BenchmarkPanel(b *testing.B) {
	f := newFixtureTB(b, harnesstest.TextScript)
	const long, short = 10_000, 100
	harnesstest.Parked{Facts: long, InputTokens: 1800}.Append(b, f.store, "long")
	harnesstest.Parked{Facts: short, InputTokens: 1800}.Append(b, f.store, "short")
	panel := func(id string) time.Duration {
		start := time.Now()
		resp, body := f.do("GET", "/t/"+id+"/panel", "")
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "verified") {
			b.Fatalf("panel of %s: %d\n%s", id, resp.StatusCode, body)
		}
		return d
	}
	panel("long")
	panel("short")
	var longT, shortT time.Duration
	for b.Loop() {
		longT += panel("long")
		shortT += panel("short")
	}
	n := float64(b.N)
	b.ReportMetric(float64(longT)/n/float64(time.Millisecond), "ms/panel@10k")
	b.ReportMetric(float64(shortT)/n/float64(time.Millisecond), "ms/panel@100")
	b.ReportMetric(float64(longT)/float64(shortT), "ratio")
}
