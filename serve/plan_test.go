package serve_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// TestPagePlan: a thread waiting on a plan shows it on the page with its
// own form (not a reconciliation's): "Ask for another" posts a message and
// the thread plans again; "Act on this plan" switches plan mode off for
// that plan, by the page's person, and the thread carries it out. A form
// naming a plan that no longer waits acts on nothing.
func TestPagePlan(t *testing.T) {
	f := newFixture(t, `{"text": "Plan A."}
{"text": "Plan B."}
{"text": "Carried out."}
`)
	m, err := stock.LoadModel(f.script)
	require.NoError(t, err)
	svc, err := f.stock.Services(m, stock.BlobsOf(f.store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(f.srv.Store(), svc, f.stock.Config)
	require.NoError(t, err)
	on, err := drive.PlanOn("ana")
	require.NoError(t, err)
	out, err := rt.Thread(f.stock.Actor, "t1").Start(context.Background(), "Make the TTL 300", on)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)

	c, get := f.browser(t)
	get("/?token=" + token)
	page := get("/t/t1")
	require.Contains(t, page, "Plan <code>plan-1</code>")
	require.Contains(t, page, `value="act" class="approve">Act on this plan`)
	require.NotContains(t, page, "Reconcile <code>plan-1")
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)[1]
	post := func(form url.Values) (int, string) {
		resp, err := c.PostForm(f.http.URL+"/t/t1/answer", form)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post(url.Values{"csrf": {csrf}, "kind": {"plan"}, "request": {"plan-1"}, "answer": {"revise"}, "text": {"Cover the CLI too"}})
	require.Equal(t, http.StatusOK, code, body)
	f.waitFor("t1", "the second plan", func(d serve.ThreadDetail) bool {
		return len(d.Waits) == 1 && d.Waits[0].RequestID == "plan-2"
	})
	code, body = post(url.Values{"csrf": {csrf}, "kind": {"plan"}, "request": {"plan-1"}, "answer": {"act"}})
	require.Contains(t, body, "the plan of turn 1 no longer waits", "the plan shown is not the one waiting: nothing acted on")
	code, body = post(url.Values{"csrf": {csrf}, "kind": {"plan"}, "request": {"plan-2"}, "answer": {"act"}})
	require.Equal(t, http.StatusOK, code, body)
	d := f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone })
	require.Empty(t, d.Waits)
	p, err := facts.Decode[facts.PlanModeSet](f.last("t1", facts.KindPlanModeSet))
	require.NoError(t, err)
	require.Equal(t, facts.PlanModeSet{Acts: 2, By: "ana"}, p)
}

// TestAPIPlanSwitch: POST /api/threads/ID/plan switches plan mode by the
// token's person; the same switch again appends nothing; a body that does
// not say on or off is refused.
func TestAPIPlanSwitch(t *testing.T) {
	f := newFixture(t, `{"text": "Done."}
`)
	require.Equal(t, harness.StatusDone, f.start("t1").Status)
	resp, b := f.do("POST", "/api/threads/t1/plan", `{}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
	resp, b = f.do("POST", "/api/threads/t1/plan", `{"on": true}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	p, err := facts.Decode[facts.PlanModeSet](f.last("t1", facts.KindPlanModeSet))
	require.NoError(t, err)
	require.Equal(t, facts.PlanModeSet{On: true, By: "ana"}, p)
	resp, b = f.do("POST", "/api/threads/t1/plan", `{"on": true}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"duplicate": true`)
	resp, b = f.do("POST", "/api/threads/t1/plan", `{"on": false}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
}
