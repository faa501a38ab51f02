package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
)

// delegateScript: the parent delegates a write to a child, which asks for
// its confirmation, writes and says done; the parent then says done.
const delegateScript = `{"text": "A helper will do it.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300\"}"}]}
{"text": "Done."}
{"thread": "1-d1", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"thread": "1-d1", "text": "Set."}
`

// TestDelegatedThread: a parent parked on its child's confirmation shows
// the child's request as its own, named <child>/<id>; approving it there
// (or in the child) and resuming drives the tree to done; the list says
// whose child each thread is.
func TestDelegatedThread(t *testing.T) {
	for _, through := range []string{"parent", "child"} {
		t.Run(through, func(t *testing.T) {
			f := newFixture(t, delegateScript)
			out := f.start("t1")
			require.Equal(t, harness.StatusParked, out.Status)

			d := f.detail("t1")
			require.Len(t, d.Waits, 1)
			p := d.Waits[0]
			require.Equal(t, "t1.1-d1", p.Thread)
			require.Equal(t, "1-w", p.RequestID)
			require.Equal(t, "t1.1-d1/1-w", drive.Ref(p))
			require.Contains(t, p.Preview, "+ttl_seconds = 300", "the child's write, previewed")

			resp, b := f.do("GET", "/api/threads", "")
			require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
			var l struct{ Threads []serve.ThreadSummary }
			require.NoError(t, json.Unmarshal(b, &l))
			list := l.Threads
			require.Len(t, list, 2)
			require.Equal(t, "t1", list[0].Thread)
			require.Equal(t, "t1.1-d1", list[1].Thread)
			require.Equal(t, "t1", list[1].Parent)
			require.Equal(t, "t1.1-d1/1-w", drive.Ref(list[0].Waits[0]))
			// The list's filters: a tree, a status; bad ones are refused.
			for q, want := range map[string]int{"?root=t1": 2, "?root=t9": 0, "?status=parked": 2, "?status=done": 0, "?root=t1&limit=1": 1} {
				resp, b := f.do("GET", "/api/threads"+q, "")
				require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
				var l struct{ Threads []serve.ThreadSummary }
				require.NoError(t, json.Unmarshal(b, &l))
				require.Len(t, l.Threads, want, q)
			}
			for _, q := range []string{"?status=sleepy", "?root=..%2Fx"} {
				resp, b := f.do("GET", "/api/threads"+q, "")
				require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", q, b)
			}

			id, ref := "t1", drive.Ref(p)
			if through == "child" {
				id, ref = "t1.1-d1", "1-w"
				require.Equal(t, "1-w", drive.Ref(f.detail(id).Waits[0]))
			}
			body := `{"kind": "confirmation", "request_id": "` + ref + `", "approved": true, "digest": "` + p.Digest + `"}`
			resp, b = f.do("POST", "/api/threads/"+id+"/answer", body)
			require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
			require.Contains(t, string(b), `"resuming": true`, string(b))
			f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
			got, err := os.ReadFile(filepath.Join(f.root, "cache.toml"))
			require.NoError(t, err)
			require.Equal(t, "ttl_seconds = 300\n", string(got))
			require.Equal(t, harness.StatusDone, f.detail("t1.1-d1").Status)

			resp, b = f.do("POST", "/api/threads/"+id+"/answer", body)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
			require.Contains(t, string(b), `"duplicate": true`)

			resp, b = f.do("GET", "/api/threads/t1/replay", "")
			require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
			var rep serve.Replay
			require.NoError(t, json.Unmarshal(b, &rep))
			require.True(t, rep.Verified, rep.Verdict)
			require.Equal(t, []string{"t1.1-d1"}, rep.Children)
			require.Contains(t, rep.Verdict, "the tree: 1 child thread verifies")
		})
	}
}

// TestDelegatedThreadPage: without JavaScript, the parent's page shows its
// child's request with the child's name, and its form approves it there;
// the list marks the child as the parent's.
func TestDelegatedThreadPage(t *testing.T) {
	f := newFixture(t, delegateScript)
	f.start("t1")
	c, get := f.browser(t)
	list := get("/?token=" + token)
	require.Contains(t, list, "confirmation t1.1-d1/1-w")
	require.Contains(t, list, `child of <a href="t/t1">t1</a>`)
	page := get("/t/t1")
	require.Contains(t, page, "Confirm <code>t1.1-d1/1-w</code>: write_file")
	require.Contains(t, page, `name="request" value="t1.1-d1/1-w"`)
	require.Contains(t, page, "&#43;ttl_seconds = 300", "the child's diff")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m)
	d := f.detail("t1")
	form := url.Values{"csrf": {m[1]}, "kind": {"confirmation"}, "request": {"t1.1-d1/1-w"}, "digest": {d.Waits[0].Digest}, "answer": {"approve"}}
	resp, err := c.PostForm(f.http.URL+"/t/t1/answer", form)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	a, err := facts.Decode[facts.ConfirmationAnswered](f.last("t1.1-d1", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.True(t, a.Approved)
	require.Equal(t, "ana", a.By)
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	// Finished, the parent's page still links its child.
	page = get("/t/t1")
	require.Contains(t, page, `<h2>Children</h2>`)
	require.Contains(t, page, `<li><a href="t/t1.1-d1">t1.1-d1</a> <span class="badge done">done</span>`)
}

// TestAnswerOutsideTheTree: an answer that names a request of a thread
// outside the tree of the thread it is posted to — one that does not
// exist, or the parent named from its child — is a 404 that says so, not
// a server error, and appends nothing.
func TestAnswerOutsideTheTree(t *testing.T) {
	f := newFixture(t, delegateScript)
	require.Equal(t, harness.StatusParked, f.start("t1").Status)
	p := f.detail("t1").Waits[0]
	before, parent := f.head("t1.1-d1"), f.head("t1")
	for _, tc := range []struct{ id, ref string }{
		{"t1", "t9/1-w"},
		{"t1.1-d1", "t1/1-w"},
		{"t1", "t1.1-d1.x/1-w"},
	} {
		body := `{"kind": "confirmation", "request_id": "` + tc.ref + `", "approved": true, "digest": "` + p.Digest + `"}`
		resp, b := f.do("POST", "/api/threads/"+tc.id+"/answer", body)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s on %s: %s", tc.ref, tc.id, b)
		var e struct{ Error, Code string }
		require.NoError(t, json.Unmarshal(b, &e))
		require.Equal(t, "not_in_tree", e.Code)
		require.Contains(t, e.Error, "not a thread of the tree")
	}
	// Two threads whose spawn records name each other (a store written by
	// hand): a walk up from either never ends at the root, and is cut.
	for id, parent := range map[string]string{"x": "y", "y": "x"} {
		d, err := facts.NewDraft(facts.KindThreadSpawned, "spawn/"+id, facts.ThreadSpawned{Parent: parent, Seq: 1, Hash: "00", Key: "k"})
		require.NoError(t, err)
		_, err = f.store.Append(context.Background(), id, 0, d)
		require.NoError(t, err)
	}
	body := `{"kind": "confirmation", "request_id": "x/1-w", "approved": true, "digest": "` + p.Digest + `"}`
	resp, b := f.do("POST", "/api/threads/t1/answer", body)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(b))
	require.Contains(t, string(b), "not_in_tree")
	resp, b = f.do("GET", "/api/threads/x", "")
	require.Less(t, resp.StatusCode, 500, "the server still answers: %s", b)
	require.Equal(t, before, f.head("t1.1-d1"), "nothing appended")
	require.Equal(t, parent, f.head("t1"))
	require.Len(t, f.detail("t1").Waits, 1)
}
