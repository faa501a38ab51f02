package rerun_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/openai"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// chatRequest is what the fake server reads of a request.
type chatRequest struct {
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
}

// A rerun against an OpenAI-compatible server: each request it receives
// carries the original's recorded tool results, in order, as the tool
// messages of the calls the server's model made; the turns are priced.
func TestRerunAgainstOpenAIServer(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)

	// The results the original's model was shown, in order.
	var want []string
	var done *facts.ActionCompleted
	for _, f := range logOf(t, e, "t") {
		switch f.Kind {
		case facts.KindActionCompleted:
			c, err := facts.Decode[facts.ActionCompleted](f)
			require.NoError(t, err)
			if done != nil {
				want = append(want, scheduler.ToolResult(*done, nil))
			}
			done = &c
		case facts.KindCheckRecorded:
			c, err := facts.Decode[facts.CheckRecorded](f)
			require.NoError(t, err)
			want = append(want, scheduler.ToolResult(*done, &c))
			done = nil
		}
	}
	if done != nil {
		want = append(want, scheduler.ToolResult(*done, nil))
	}
	require.Len(t, want, 3)

	calls := []string{
		`{"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"notes.txt\"}"}}`,
		`{"id":"call_b","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}}`,
		`{"id":"call_c","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"notes.txt\",\"content\":\"ttl is 300\\n\"}"}}`,
	}
	var (
		mu   sync.Mutex // guards reqs
		reqs []chatRequest
	)
	serve := func(prompt int) *httptest.Server {
		var mine int
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var req chatRequest
			if err := json.Unmarshal(b, &req); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			mu.Lock()
			n := mine
			mine++
			reqs = append(reqs, req)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			msg := `{"role":"assistant","content":"Done."}`
			finish := "stop"
			if n < len(calls) {
				msg = `{"role":"assistant","content":null,"tool_calls":[` + calls[n] + `]}`
				finish = "tool_calls"
			}
			fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":%d,"completion_tokens":100,"total_tokens":1100}}`, n, msg, finish, prompt)
		}))
	}
	srv := serve(1000)
	defer srv.Close()

	m, err := openai.New("gpt-4.1-mini", model.WithBaseURL(srv.URL+"/v1"), model.WithAPIKey("k"))
	require.NoError(t, err)
	rt, actor, _, ran := rerunOn(t, e, scriptB, harness.WithModelName("openai:gpt-4.1-mini"), func(c *harness.Config) { p := model.DefaultPrices(); c.Prices = &p })
	rt.Services.Model = m

	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "openai:gpt-4.1-mini", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, rerun.VerdictMatched, rep.Verdict)
	require.Equal(t, 3, rep.Served)
	require.Equal(t, int64(0), ran.Load())
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))

	require.Len(t, reqs, 4)
	for i, req := range reqs {
		got, ids := []string{}, []string{}
		for _, msg := range req.Messages {
			if msg.Role == "tool" {
				s, _ := msg.Content.(string)
				got = append(got, s)
				ids = append(ids, msg.ToolCallID)
			}
		}
		require.Equal(t, want[:i], got, "request %d carries the recorded results so far, in order", i+1)
		require.Equal(t, []string{"call_a", "call_b", "call_c"}[:i], ids, "request %d: each result answers the server's own call", i+1)
	}
	// Priced by the default table: 4 turns of 1000 in, 100 out at
	// gpt-4.1-mini's $0.40 and $1.60 per million.
	require.True(t, rep.RerunSide.Priced)
	require.InDelta(t, 4*(1000*0.40+100*1.60)/1e6, rep.RerunSide.USD, 1e-12)

	// A rerun of the rerun, its turns dearer: priced on both sides, each
	// turn has its cost ratio, (2000×0.40 + 100×1.60) / (1000×0.40 +
	// 100×1.60).
	dear := serve(2000)
	defer dear.Close()
	m2, err := openai.New("gpt-4.1-mini", model.WithBaseURL(dear.URL+"/v1"), model.WithAPIKey("k"))
	require.NoError(t, err)
	rt.Services.Model = m2
	rep2, err := rerun.Run(ctx, rerun.Options{From: rep.Rerun, Model: "openai:gpt-4.1-mini", As: "dear", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, rerun.VerdictMatched, rep2.Verdict)
	require.Len(t, rep2.Turns, 4)
	for _, p := range rep2.Turns {
		require.True(t, p.Original.Priced && p.Rerun.Priced)
		require.Equal(t, int64(2000), p.Rerun.InputTokens)
		require.Equal(t, int64(1000), p.Original.InputTokens)
		require.InDelta(t, 960.0/560.0, p.CostRatio, 1e-9, "turn %d", p.N)
	}
	require.InDelta(t, 960.0/560.0, rep2.CostRatio, 1e-9)
	b, err := json.Marshal(rep2.Turns[0])
	require.NoError(t, err)
	require.Contains(t, string(b), `"cost_ratio":1.714`)
	require.Contains(t, string(b), `"checks_passed":0`)
}
