package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// The benchmarks' store: HARNESS_SEARCH_BENCH_THREADS threads (default
// 200) of about HARNESS_SEARCH_BENCH_FACTS facts in all (default 20000):
// 1M facts of 10k threads is HARNESS_SEARCH_BENCH_THREADS=10000
// HARNESS_SEARCH_BENCH_FACTS=1000000. Each thread is a message, its
// configuration, tool calls (each a turn, request, confirmation, answer,
// start, completion and check) and a last turn.
func benchSize(tb testing.TB) (threads, perThread int) {
	get := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		require.NoError(tb, err, name)
		require.Positive(tb, n, name)
		return n
	}
	threads = get("HARNESS_SEARCH_BENCH_THREADS", 200)
	perThread = max(get("HARNESS_SEARCH_BENCH_FACTS", 20000)/threads, 10)
	return threads, perThread
}

// benchWord is the i-th word of the benchmark's vocabulary of 5000.
func benchWord(i int) string { return "w" + strconv.Itoa(i%5000) }

// benchDrafts are the facts of benchmark thread i: about n of them.
func benchDrafts(tb testing.TB, i, n int) []facts.Draft {
	x := fxOf(i)
	d := func(kind facts.Kind, cause string, payload any) facts.Draft {
		dr, err := facts.NewDraft(kind, cause, payload)
		require.NoError(tb, err)
		return dr
	}
	out := []facts.Draft{
		d(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "Please fix the " + x.topic + " bug in " + x.path}),
		d(facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{Model: x.model}),
	}
	// A cheap, fixed sequence of words: each call's output has four.
	r := uint32(i*7919 + 1)
	word := func() string {
		r = r*1664525 + 1013904223
		return benchWord(int(r >> 8))
	}
	for c := 1; len(out)+8 <= n; c++ {
		id := fmt.Sprintf("call_%d", c)
		act := fmt.Sprintf("%d-%s", c, id)
		tool, path, by := fxTools[(i+c)%len(fxTools)], fxPaths[(i+c)%len(fxPaths)], fxPeople[(i+c)%len(fxPeople)]
		args, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
		out = append(out,
			d(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(c), facts.ModelTurn{Turn: c, Text: "Now the " + x.topic + " part.", ToolCalls: []facts.ToolCall{{ID: id, Name: tool, Args: string(args)}}}),
			d(facts.KindActionRequested, "tool/request/"+act, facts.ActionRequested{ActionID: act, CallID: id, Adapter: tool, Payload: facts.RawJSON(args), Confirm: true}),
			d(facts.KindConfirmationRequested, "confirm/"+act, facts.ConfirmationRequested{RequestID: act, CallID: act, Tool: tool, Args: string(args)}),
			d(facts.KindConfirmationAnswered, "ingress/answer-"+act, facts.ConfirmationAnswered{RequestID: act, Approved: true, By: by}),
			d(facts.KindActionStarted, "tool/start/"+act, facts.ActionStarted{ActionID: act}),
			d(facts.KindActionCompleted, "tool/execute/"+act, facts.ActionCompleted{ActionID: act,
				Report:      facts.Report{Status: facts.StatusSucceeded, Stdout: "ran " + word() + " " + word() + " " + word() + " " + word()},
				Observation: facts.Observation{Available: true, Changed: []facts.PathChange{{Path: path, After: "abc"}}},
				EffectState: fxEffects[(i+c)%len(fxEffects)]}),
			d(facts.KindCheckRecorded, "tool/check/"+act, facts.CheckRecorded{ActionID: act, Check: facts.CheckSpec{Name: "file_equals", Target: path}, Verdict: fxChecks[(i+c)%len(fxChecks)]}),
		)
	}
	return append(out, d(facts.KindModelTurn, "infer/turn/last", facts.ModelTurn{Text: "Done with the " + x.topic + "."}))
}

// benchStore is the benchmarks' store and its index, built once per run.
var benchStore struct {
	once  sync.Once
	store *thread.PebbleStore
	ix    *Index
	facts int
	dir   string
	err   error
}

func benchFixture(b *testing.B) (*thread.PebbleStore, *Index, int) {
	benchStore.once.Do(func() {
		dir, err := os.MkdirTemp("", "harness-search-bench-")
		if err != nil {
			benchStore.err = err
			return
		}
		benchStore.dir = dir
		threads, per := benchSize(b)
		var i int
		s, err := thread.OpenPebble(dir+"/db", thread.WithClock(func() time.Time { return fxAt(i) }))
		if err != nil {
			benchStore.err = err
			return
		}
		start := time.Now()
		for i = 0; i < threads; i++ {
			ds := benchDrafts(b, i, per)
			if _, err := s.Append(context.Background(), fxOf(i).id, 0, ds...); err != nil {
				benchStore.err = err
				return
			}
			benchStore.facts += len(ds)
		}
		built := time.Since(start)
		ix, err := Open(context.Background(), dir+"/search", 0)
		if err != nil {
			benchStore.err = err
			return
		}
		start = time.Now()
		if _, err := ix.Update(context.Background(), s); err != nil {
			benchStore.err = err
			return
		}
		b.Logf("store of %d facts in %d threads built in %v, indexed in %v", benchStore.facts, threads, built.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		benchStore.store, benchStore.ix = s, ix
	})
	if benchStore.err != nil {
		b.Fatal(benchStore.err)
	}
	return benchStore.store, benchStore.ix, benchStore.facts
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchStore.ix != nil {
		benchStore.ix.Close()
		benchStore.store.Close()
	}
	if benchStore.dir != "" {
		os.RemoveAll(benchStore.dir)
	}
	os.Exit(code)
}

// scan answers q as a search without an index would: it reads every
// fact of every thread, finds each fact's terms as the index does, and
// keeps the newest limit that have all of q's.
func scan(ctx context.Context, store thread.Store, q Query, limit int) ([]facts.Fact, error) {
	var found []facts.Fact
	page := thread.ThreadsPage{Limit: 1000}
	for {
		heads, err := store.Threads(ctx, page)
		if err != nil || len(heads) == 0 {
			break
		}
		for _, h := range heads {
			c := newCarry(nil)
			for f, err := range store.Read(ctx, h.Thread, 1) {
				if err != nil {
					return nil, err
				}
				p := c.index(f)
				if !containsAll(p.terms, q.Terms) {
					continue
				}
				found = append(found, f)
			}
		}
		page.After = heads[len(heads)-1].Thread
	}
	slices.SortFunc(found, func(x, y facts.Fact) int {
		if c := y.At.Compare(x.At); c != 0 {
			return c
		}
		return int(y.Seq) - int(x.Seq)
	})
	return found[:min(limit, len(found))], nil
}

func containsAll(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// BenchmarkSearch times a field query and a free-text query, each an
// update of the index (nothing new) and a page of 20 hits confirmed by
// the log, as harness search does; the ratio is to a full scan of the
// same store in the same run, which finds the same hits.
func BenchmarkSearch(b *testing.B) {
	store, ix, n := benchFixture(b)
	ctx := context.Background()
	var scanTime time.Duration
	for _, c := range []struct{ name, query string }{
		{"field", "by:ana tool:write_file path:go.mod kind:action.completed"},
		{"text", "ran w42"},
	} {
		q, err := Parse(c.query, fxBase)
		require.NoError(b, err)
		start := time.Now()
		want, err := scan(ctx, store, q, DefaultLimit)
		require.NoError(b, err)
		scanTime = time.Since(start)
		b.Run(c.name, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				_, err := ix.Update(ctx, store)
				require.NoError(b, err)
				p, err := ix.Search(ctx, store, q, Options{Limit: DefaultLimit})
				require.NoError(b, err)
				times = append(times, time.Since(start))
				require.Len(b, p.Hits, len(want))
				for i, h := range p.Hits {
					require.Equal(b, want[i].Hash(), h.Hash)
				}
			}
			slices.Sort(times)
			median := times[len(times)/2]
			b.ReportMetric(float64(median.Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(scanTime)/float64(median), "x-faster-than-scan")
			b.ReportMetric(float64(scanTime.Microseconds())/1000, "ms-scan")
			b.ReportMetric(float64(n), "facts")
			b.ReportMetric(float64(len(want)), "hits")
		})
	}
}

// BenchmarkAppendIndexed times appending calls of 7 facts to threads,
// each append synced, to a store without an index and to one whose
// appender indexes each thread after its append (Index.UpdateThread),
// one after the other in each iteration so that both see the same load,
// and reports the throughput of the second as a share of the first
// (goal: ≥ 0.7).
func BenchmarkAppendIndexed(b *testing.B) {
	ctx := context.Background()
	const threads = 20
	type side struct {
		s     *thread.PebbleStore
		ix    *Index
		heads []uint64
		took  time.Duration
	}
	open := func(index bool) *side {
		s, err := thread.OpenPebble(b.TempDir())
		require.NoError(b, err)
		b.Cleanup(func() { s.Close() })
		sd := &side{s: s, heads: make([]uint64, threads)}
		if index {
			sd.ix, err = Open(ctx, b.TempDir(), 0)
			require.NoError(b, err)
			b.Cleanup(func() { sd.ix.Close() })
		}
		return sd
	}
	plain, indexed := open(false), open(true)
	appendTo := func(sd *side, i int) {
		t := i % threads
		id := fxOf(t).id
		var ds []facts.Draft
		if sd.heads[t] == 0 {
			ds = benchDrafts(b, t, 10)[:2]
		} else {
			ds = benchDrafts(b, t+i, 11)[2:9]
			for k := range ds {
				ds[k].Cause += "/" + strconv.Itoa(i)
			}
		}
		start := time.Now()
		h, err := sd.s.Append(ctx, id, sd.heads[t], ds...)
		require.NoError(b, err)
		if sd.ix != nil {
			_, err := sd.ix.UpdateThread(ctx, sd.s, id)
			require.NoError(b, err)
		}
		sd.took += time.Since(start)
		sd.heads[t] = h.Seq
	}
	for i := 0; b.Loop(); i++ {
		appendTo(plain, i)
		appendTo(indexed, i)
	}
	if indexed.took > 0 {
		b.ReportMetric(float64(plain.took)/float64(indexed.took), "share-of-plain")
	}
}
