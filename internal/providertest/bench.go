package providertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Bench: one model turn through a provider — the request
// built from the conversation, sent through the SDK with the exchange
// recorded, the response decoded into a Decision — and the same turn as
// the harness runs it (an effect with the harness's retry policy), against
// the raw baseline: the same request bytes POSTed with net/http to the same
// httptest server and the response read whole, in the same run. The
// conversation is a second turn (system prompt, a tool call and its
// result, two tools); the response is a text and a tool call.
func Bench(b *testing.B, p Provider) {
	for _, streamed := range []bool{false, true} {
		name := "plain"
		rp := p.Calls("Writing.", [3]string{"call_9", "write_file", `{"path":"a.toml","content":"ttl = 300"}`})
		if streamed {
			name = "streamed"
			rp = p.Stream([]string{"Writing", "."}, true, [3]string{"call_9", "write_file", `{"path":"a.toml","content":"ttl = 300"}`})
		}
		b.Run(name, func(b *testing.B) {
			f := NewFake(b, p.Path, rp)
			var opts []model.Option
			if streamed {
				opts = append(opts, model.WithStream(func(string) {}))
			}
			m := p.Open(b, f, opts...)
			ctx := context.Background()
			req := Conversation()
			d, err := m.Turn(ctx, req) // warm the connection; learn the bytes sent
			if err != nil {
				b.Fatal(err)
			}
			body, url, hdr := d.Exchange.Request, d.Exchange.URL, f.Header(0)
			client := f.Server.Client()

			direct := measure(b.N, func() {
				r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				r.Header = hdr.Clone()
				res, err := client.Do(r)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, res.Body); err != nil {
					b.Fatal(err)
				}
				res.Body.Close()
			})
			provider := measure(b.N, func() {
				if _, err := m.Turn(ctx, req); err != nil {
					b.Fatal(err)
				}
			})
			// As harness.inferTurn runs it.
			turn := effect.Retry(effect.FromAsync(func(ctx context.Context, m model.Model) (facts.ModelTurn, error) {
				d, err := m.Turn(ctx, req)
				if err != nil {
					return facts.ModelTurn{}, err
				}
				if err := d.Validate(); err != nil {
					return facts.ModelTurn{}, &model.Error{Class: facts.ClassInvalidOutput, Err: err}
				}
				return facts.ModelTurn{Text: d.Text, ToolCalls: d.ToolCalls, Usage: d.Usage}, nil
			}), effect.Policy{MaxAttempts: 3, Backoff: time.Millisecond, RetryIf: model.IsTransient})
			harnessed := measure(b.N, func() {
				if ex := effect.Run(ctx, turn, model.Model(m)); ex.Err() != nil {
					b.Fatal(ex.Err())
				}
			})
			b.ReportMetric(direct, "direct-ns/op")
			b.ReportMetric(provider, "provider-ns/op")
			b.ReportMetric(harnessed, "harness-ns/op")
			b.ReportMetric(provider/direct, "ratio")
			b.ReportMetric(harnessed/direct, "harness-ratio")
			b.ReportMetric(float64(len(d.Exchange.Request)), "request-bytes")
			b.ReportMetric(float64(len(d.Exchange.Response)), "response-bytes")
		})
	}
}

func measure(n int, f func()) float64 {
	start := time.Now()
	for range n {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}
