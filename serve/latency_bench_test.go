package serve_test

import (
	"bufio"
	"context"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/serve"
)

// BenchmarkProgressLatency is how long a chunk of command output takes
// from the run handing it over to reaching the page's live stream
// (/t/ID/progress, as the page reads it) at 50 watchers, the median
// over every watcher and chunk, against the raw baseline of the same
// with one watcher, measured in the same run (the goal: ≤ 100 ms at 50).
func BenchmarkProgressLatency(b *testing.B) {
	f := newFixtureTB(b, slowScript(b))
	f.start("t1")
	p := serve.ProgressOf(f.srv, "t1")
	num := regexp.MustCompile(`chunk (\d+)`)
	run := func(watchers int) time.Duration {
		// A turn starts: what the hub kept of the last run is recorded by
		// now, and no new stream is sent it.
		p(drive.Event{Kind: drive.EventTurnStarted, Turn: watchers})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var (
			mu   sync.Mutex // guards sent and lat
			sent = map[int]time.Time{}
			lat  []time.Duration
			wg   sync.WaitGroup
		)
		ready := make(chan struct{}, watchers)
		for range watchers {
			req, err := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/t/t1/progress", nil)
			require.NoError(b, err)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := f.http.Client().Do(req)
			require.NoError(b, err)
			require.Equal(b, http.StatusOK, resp.StatusCode)
			wg.Go(func() {
				defer resp.Body.Close()
				r := bufio.NewReader(resp.Body)
				ready <- struct{}{}
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if !strings.HasPrefix(line, "data: ") {
						continue
					}
					if m := num.FindStringSubmatch(line); m != nil {
						n, _ := strconv.Atoi(m[1])
						at := time.Now()
						mu.Lock()
						lat = append(lat, at.Sub(sent[n]))
						mu.Unlock()
					}
				}
			})
		}
		for range watchers {
			<-ready
		}
		time.Sleep(50 * time.Millisecond) // every stream has subscribed
		for i := range b.N {
			mu.Lock()
			sent[i] = time.Now()
			mu.Unlock()
			p(drive.Event{Kind: drive.EventOutput, Thread: "t1", ActionID: "1-c", Stream: "stdout", Text: "chunk " + strconv.Itoa(i) + "\n"})
			time.Sleep(2 * time.Millisecond) // output as a command writes it, not a flood
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n := len(lat)
			mu.Unlock()
			if n >= watchers*b.N || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		wg.Wait()
		require.Len(b, lat, watchers*b.N, "every watcher got every chunk")
		slices.Sort(lat)
		return lat[len(lat)/2]
	}
	b.ResetTimer()
	one := run(1)
	fifty := run(50)
	b.ReportMetric(float64(one.Microseconds())/1000, "ms-median-1-watcher")
	b.ReportMetric(float64(fifty.Microseconds())/1000, "ms-median-50-watchers")
	b.ReportMetric(float64(fifty)/float64(max(one, 1)), "ratio")
}
