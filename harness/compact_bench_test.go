package harness_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
)

// benchWindow is the context window of BenchmarkCompaction's session.
const benchWindow = 16_000

// BenchmarkCompaction runs a scripted 200-turn session — each turn reads
// a file of about 500 tokens — against an OpenAI-compatible server
// (httptest) that reports usage: the request's size in tokens. With a
// context window of 16,000 tokens the session compacts by the model
// whenever its context nears the window. It reports the tokens sent on
// the turn just before each compaction and on the turn just after (the
// means), and ratio = after / before; and the tokens sent over the whole
// session, compaction turns included, against the same session run with
// no window (total-ratio).
func BenchmarkCompaction(b *testing.B) {
	const turns = 200
	var before, after, compacted, plain []int64
	compactions := 0
	for b.Loop() {
		for _, window := range []int{benchWindow, 0} {
			p := &provider{turns: turns}
			srv := httptest.NewServer(p)
			s := openBenchStore(b)
			rt, actor := compactRuntime(b, s, srv.URL, window)
			out, err := rt.Start(ctx, actor, "t", "Read every file, one a turn.")
			srv.Close()
			require.NoError(b, err)
			require.Equal(b, harness.StatusDone, out.Status, out.Reason)
			var total int64
			for _, r := range p.requests() {
				total += r.tokens
				if window > 0 {
					require.Less(b, r.tokens, int64(window), "a request past the window")
				}
			}
			if window == 0 {
				plain = append(plain, total)
				continue
			}
			compacted = append(compacted, total)
			bf, af := aroundCompaction(p.requests())
			require.NotEmpty(b, bf, "the session compacted")
			before, after = append(before, bf...), append(after, af...)
			for _, r := range p.requests() {
				if r.summary {
					compactions++
				}
			}
		}
	}
	mean := func(xs []int64) float64 {
		var sum int64
		for _, x := range xs {
			sum += x
		}
		return float64(sum) / float64(len(xs))
	}
	b.ReportMetric(mean(before), "tokens-before")
	b.ReportMetric(mean(after), "tokens-after")
	b.ReportMetric(float64(compactions)/float64(b.N), "compactions")
	b.ReportMetric(mean(compacted), "tokens-total")
	b.ReportMetric(mean(plain), "tokens-total-no-window")
	b.ReportMetric(mean(compacted)/mean(plain), "total-ratio")
	b.ReportMetric(mean(after)/mean(before), "ratio")
}
