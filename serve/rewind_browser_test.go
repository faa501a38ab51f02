package serve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/serve"
)

// doneThread is a fixture whose thread t1 wrote cache.toml ("ttl_seconds
// = 60" → "300") and is done.
func doneThread(t *testing.T) *fixture {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")
	resp, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, true, true))
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	return f
}

func (f *fixture) read(rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, rel))
	require.NoError(f.t, err)
	return string(b)
}

// TestUndoAndForkInABrowser: from the thread's timeline, the undo
// preview shows the diff the undo makes to the workspace and a button;
// pressing it restores the file and records who did it. The fork preview
// shows what the workspace keeps of the thread after the seq, and its
// button starts the fork. An undo confirmed after the thread moved is
// refused, changing nothing, and the preview says why.
func TestUndoAndForkInABrowser(t *testing.T) {
	f := doneThread(t)
	ctx := newBrowser(t, 40*time.Second)
	type css = chromedp.CSS
	text := func(sel css) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		require.NoError(t, err, "the text of %s", sel)
		return s
	}
	base := f.http.URL

	// A preview whose thread moves before it is confirmed.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/t/t1/undo?to=0&token="+token),
		chromedp.WaitVisible(css(`button.undo`)),
	))
	diff := text(`.undo-diffs`)
	require.Contains(t, diff, "cache.toml")
	require.Contains(t, diff, "-ttl_seconds = 300")
	require.Contains(t, diff, "+ttl_seconds = 60")
	require.Equal(t, "ttl_seconds = 300\n", f.read("cache.toml"), "a preview changes nothing")
	moved := f.head("t1")
	_, err := f.store.Append(t.Context(), "t1", moved, mustDraft(t, facts.KindPolicySet, facts.IngressCause("elsewhere"), facts.PolicySet{Approve: "ask", By: "bo"}))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`button.undo`)),
		chromedp.WaitVisible(css(`p.error`)),
	))
	require.Contains(t, text(`p.error`), rewind.ErrMoved.Error())
	require.Equal(t, "ttl_seconds = 300\n", f.read("cache.toml"), "refused: nothing changed")
	require.Equal(t, moved+1, f.head("t1"), "nothing appended")

	// The preview shown again is of the thread as it is now: confirm it.
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(`button.undo`))))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`button.undo`)),
		chromedp.WaitVisible(css(`#timeline`)),
	))
	location, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	require.Contains(t, location, base+"/t/t1?")
	require.Contains(t, text(`main`), "undone: 1 path restored to how it was at seq 0")
	require.Equal(t, "ttl_seconds = 60\n", f.read("cache.toml"))
	rec, err := facts.Decode[facts.WorkspaceRestored](f.last("t1", facts.KindWorkspaceRestored))
	require.NoError(t, err)
	require.Equal(t, "ana", rec.By)
	require.Len(t, rec.Restored, 1)

	// A fork where the confirmation was asked: the workspace keeps what
	// the thread did after it (undone by now: nothing to show), and the
	// button starts the fork.
	at := f.last("t1", facts.KindConfirmationRequested).Seq
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/t/t1/fork?at=%d", base, at)),
		chromedp.WaitVisible(css(`button.fork`)),
	))
	require.Contains(t, text(`main`), "A fork changes no file")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`button.fork`)),
		chromedp.WaitVisible(css(`#timeline`)),
	))
	fork := rewind.ForkID("t1", at)
	location, err = chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	require.Contains(t, location, base+"/t/"+fork+"?")
	require.Contains(t, text(`main`), fmt.Sprintf("forked from t1 at seq %d", at))
	require.Equal(t, harness.StatusParked, f.detail(fork).Status, "the fork is where t1 was: asking")

	// Forking there again: the id is taken, the preview says so.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/t/t1/fork?at=%d", base, at)),
		chromedp.WaitVisible(css(`button.fork`)),
	))
	require.Contains(t, text(`main`), "exists already")
}

// TestForkPreviewShowsWhatTheWorkspaceKeeps: before any undo, a fork's
// preview shows the thread's change after the seq as a diff.
func TestForkPreviewShowsWhatTheWorkspaceKeeps(t *testing.T) {
	f := doneThread(t)
	at := f.last("t1", facts.KindConfirmationRequested).Seq
	resp, b := f.do("GET", fmt.Sprintf("/t/t1/fork?at=%d", at), "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `<span class="add">&#43;ttl_seconds = 300</span>`)
	require.Contains(t, string(b), `<span class="del">-ttl_seconds = 60</span>`)
}

// TestUndoAndForkThroughTheAPI: POST …/undo undoes what GET …/undo
// previewed, bound to its head; POST …/fork forks, refusing a taken id
// and a hostile one.
func TestUndoAndForkThroughTheAPI(t *testing.T) {
	f := doneThread(t)
	resp, b := f.do("GET", "/api/threads/t1/undo?to=0", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var plan rewind.UndoPlan
	require.NoError(t, json.Unmarshal(b, &plan))

	resp, b = f.do("POST", "/api/threads/t1/undo", fmt.Sprintf(`{"to": 0, "head": %d}`, plan.Head-1))
	require.Equal(t, http.StatusConflict, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"moved"`)
	require.Equal(t, "ttl_seconds = 300\n", f.read("cache.toml"))

	resp, b = f.do("POST", "/api/threads/t1/undo", fmt.Sprintf(`{"to": 0, "head": %d}`, plan.Head))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Equal(t, "ttl_seconds = 60\n", f.read("cache.toml"))

	resp, b = f.do("POST", "/api/threads/t1/fork", `{"at": 3}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"t1-at3"`)
	resp, b = f.do("POST", "/api/threads/t1/fork", `{"at": 3}`)
	require.Equal(t, http.StatusConflict, resp.StatusCode, string(b))
	require.Contains(t, string(b), "thread_exists")
	resp, b = f.do("POST", "/api/threads/t1/fork", `{"at": 3, "as": "../../etc"}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
	resp, b = f.do("POST", "/api/threads/t1/fork", `{"at": 99}`)
	require.NotEqual(t, http.StatusCreated, resp.StatusCode, string(b))
}

func mustDraft(t *testing.T, kind facts.Kind, cause string, v any) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(kind, cause, v)
	require.NoError(t, err)
	return d
}

// TestUndoFormNeedsThePagesToken: a post to the undo or fork button from
// a browser that carries the cookie but not the page's CSRF token (a
// form on another site) changes nothing.
func TestUndoFormNeedsThePagesToken(t *testing.T) {
	f := doneThread(t)
	c, get := f.browser(t)
	get("/?token=" + token)
	preview := get("/t/t1/undo?to=0")
	require.Contains(t, preview, `name="csrf" value="`)
	head := f.head("t1")
	for _, post := range []struct{ path, form string }{
		{"/t/t1/undo", fmt.Sprintf("to=0&head=%d", head)},
		{"/t/t1/undo", fmt.Sprintf("to=0&head=%d&csrf=%s", head, "00")},
		{"/t/t1/fork", "at=3&as=stolen"},
	} {
		resp, err := c.Post(f.http.URL+post.path, "application/x-www-form-urlencoded", strings.NewReader(post.form))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, post.path)
	}
	require.Equal(t, "ttl_seconds = 300\n", f.read("cache.toml"))
	require.Equal(t, head, f.head("t1"))
	_, err := f.store.Head(t.Context(), "stolen")
	require.Error(t, err, "no fork")
}
