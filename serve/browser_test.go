package serve_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// browser finds Debian's chromium (or another Chrome). CI installs it
// (.ci/run); the test does not skip without it, it fails and says so.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium: install it (apt-get install -y chromium), as .ci/run does")
	return ""
}

// TestPageInABrowser drives the page in a real browser: open the address
// the server prints, see the parked thread, approve it, watch the facts
// arrive without a reload, see the check pass.
//
// Mounted under a path prefix (http.StripPrefix in one's own mux), the
// same: every link, form, script, stream and redirect stays under it.
func TestPageInABrowser(t *testing.T) {
	for _, prefix := range []string{"", "/x"} {
		t.Run("at "+prefix+"/", func(t *testing.T) {
			f := newFixture(t, harnesstest.ToolScript)
			f.start("t1")
			base := f.http.URL
			var (
				mu      sync.Mutex // guards outside
				outside []string
			)
			if prefix != "" {
				mux := http.NewServeMux()
				mux.Handle(prefix+"/", http.StripPrefix(prefix, f.srv.Handler()))
				mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/favicon.ico" {
						http.NotFound(w, r) // the browser's own asking
						return
					}
					mu.Lock()
					outside = append(outside, r.URL.Path)
					mu.Unlock()
					http.NotFound(w, r)
				})
				hs := httptest.NewServer(mux)
				t.Cleanup(hs.Close) // after the browser (newBrowser's cleanup) is gone
				base = hs.URL + prefix
			}
			pageInABrowser(t, f, base)
			mu.Lock()
			defer mu.Unlock()
			require.Empty(t, outside, "requests outside the prefix")
		})
	}
}

// newBrowser starts a headless chromium for the test and returns its
// context, which ends after timeout.
func newBrowser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancel(); cancelBrowser(); cancelAlloc() })
	return ctx
}

func pageInABrowser(t *testing.T, f *fixture, base string) {
	ctx := newBrowser(t, 25*time.Second)

	type css = chromedp.CSS
	text := func(sel css) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		require.NoError(t, err, "the text of %s", sel)
		return s
	}

	// The list, from the address with the token.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/?token="+token),
		chromedp.WaitVisible(css(`a[href="t/t1"]`)),
	))
	list := text(`#threads`)
	require.Contains(t, list, "parked")
	require.Contains(t, list, "confirmation 1-call_1")

	// The thread: the call, its diff, the approve button; live once the
	// stream is open.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`a[href="t/t1"]`)),
		chromedp.WaitVisible(css(`button.approve`)),
		chromedp.WaitVisible(css(`body.live`)),
	))
	call := text(`.pending`)
	require.Contains(t, call, "write_file")
	require.Contains(t, call, "+ttl_seconds = 300")
	location, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	require.NotContains(t, location, "token", "the token left the address")
	require.Equal(t, base+"/t/t1", location)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`))
	require.NoError(t, err)

	// Approve; the facts arrive as they are appended.
	clicked := time.Now()
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css(`button.approve`))))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(`#timeline tr.kind-check-recorded`))))
	require.Contains(t, text(`#timeline tr.kind-check-recorded`), "file_equals cache.toml: pass")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(css(`#status.done`)),
		chromedp.WaitVisible(css(`.actions .verdict.pass`)),
	))
	verdict := text(`#verdict`)
	require.True(t, strings.HasPrefix(verdict, "verified"), verdict)
	stayed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`))
	require.NoError(t, err)
	require.True(t, stayed, "the facts arrived on the page as it was, without a reload")

	started := f.last("t1", facts.KindActionStarted)
	t.Logf("approval in the page to the tool starting: %v", started.At.Sub(clicked).Round(time.Millisecond))
	a, err := facts.Decode[facts.ConfirmationAnswered](f.last("t1", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.Equal(t, "ana", a.By)

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "page.png")
	if p := os.Getenv("HARNESS_SCREENSHOT"); p != "" {
		path = p // for the README: HARNESS_SCREENSHOT=$PWD/docs/serve.png
	}
	require.NoError(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot: %s", path)
}
