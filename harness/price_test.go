package harness_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/openai"
)

var priceTable = model.Prices{Version: "test-2", Models: map[string]model.Price{
	"openai:fake":  {Input: 1, Output: 2},
	"openai:other": {Input: 100, Output: 200},
}}

// Compaction turns are priced as model turns are, and the budget counts
// their cost: what the thread cost is every turn's, the summaries'
// included.
func TestCompactionIsPriced(t *testing.T) {
	p := &provider{turns: 30}
	srv := httptest.NewServer(p)
	defer srv.Close()
	s := openBenchStore(t)
	m, err := openai.New("fake", model.WithBaseURL(srv.URL), model.WithAPIKey("test"), model.WithLookupEnv(func(string) (string, bool) { return "", false }))
	require.NoError(t, err)
	read := harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			var a struct{ Path string }
			_ = json.Unmarshal(args, &a)
			return facts.Report{Status: facts.StatusSucceeded, Stdout: sessionFile(a.Path)}, nil
		}}
	tools, err := harness.NewToolbox(read)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), harness.WithMaxSteps(10_000), func(c *harness.Config) { c.ContextWindow = 6000 },
		harness.WithModelName("openai:fake"), func(c *harness.Config) { c.Prices = &priceTable })
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(s, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(t, err)
	out, err := rt.Start(ctx, actor, "t", "Read every file, one a turn.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)

	var total float64
	compactions := 0
	for f, err := range s.Read(ctx, "t", 1) {
		require.NoError(t, err)
		switch f.Kind {
		case facts.KindContextCompacted:
			cc := mustDecode[facts.ContextCompacted](t, f)
			require.NotNil(t, cc.Cost, "the compaction turn at seq %d is priced", f.Seq)
			want, ok := priceTable.Cost("openai:fake", cc.Usage)
			require.True(t, ok)
			require.Equal(t, want, *cc.Cost)
			require.Positive(t, cc.Cost.USD)
			total += cc.Cost.USD
			compactions++
		case facts.KindModelTurn:
			total += mustDecode[facts.ModelTurn](t, f).Cost.USD
		}
	}
	require.Positive(t, compactions)
	v, err := rt.Thread(actor, "t").View(ctx)
	require.NoError(t, err)
	require.InDelta(t, total, v.Budget.USD, 1e-12)
	require.NoError(t, audit.VerifyLog(ctx, s, actor, "t"))
}

// A turn is priced by the model that ran it, which it records when that
// is not the thread's recorded model (a resume with another --model).
func TestTurnPricedByTheModelThatRan(t *testing.T) {
	script, err := model.ParseScript("s", []byte(`{"text": "done", "usage": {"input_tokens": 1000, "output_tokens": 100}}`))
	require.NoError(t, err)
	s := openBenchStore(t)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), harness.WithModelName("openai:fake"), func(c *harness.Config) { c.Prices = &priceTable })
	require.NoError(t, err)
	tools, err := harness.NewToolbox()
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(s, harness.Services{Model: model.WithSpec(script, "openai:other"), Tools: tools}, cfg)
	require.NoError(t, err)
	out, err := rt.Start(ctx, actor, "t", "Go.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	var mt facts.ModelTurn
	for f, err := range s.Read(ctx, "t", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindModelTurn {
			mt = mustDecode[facts.ModelTurn](t, f)
		}
	}
	require.Equal(t, "openai:other", mt.Model)
	want, _ := priceTable.Cost("openai:other", mt.Usage)
	require.Equal(t, &want, mt.Cost)
	require.InDelta(t, (1000*100+100*200)/1e6, mt.Cost.USD, 1e-12)
	require.NoError(t, audit.VerifyLog(ctx, s, actor, "t"))
}
