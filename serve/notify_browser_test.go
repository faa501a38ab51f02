package serve_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// TestPageNotifiesWhenAThreadWaits (in chromium): with notifications
// turned on by the person (the button, and the browser's permission), a
// thread that comes to wait for a person while the list is open is told
// by a browser notification; one parked before, or after they are turned
// off, is not.
func TestPageNotifiesWhenAThreadWaits(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1") // parked before the page opens
	ctx := newBrowser(t, 40*time.Second)
	type css = chromedp.CSS
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(f.http.URL+"/?token="+token),
		chromedp.WaitVisible(css(`a[href="t/t1"]`)),
		chromedp.WaitVisible(css(`#notify`)),
	))
	// The browser's notifications, recorded: a headless browser shows
	// none, and grants nothing by itself.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => {
		window.notes = [];
		window.Notification = class {
			constructor(title, o) { window.notes.push(title + " | " + (o && o.body)); }
			static get permission() { return window.granted ? "granted" : "default"; }
			static requestPermission() { window.granted = true; return Promise.resolve("granted"); }
		};
		return null;
	})()`))
	require.NoError(t, err)
	notes := func() string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.notes.join("\n")`))
		require.NoError(t, err)
		return s
	}

	f.start("t2") // not turned on yet
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(`a[href="t/t2"]`))))
	time.Sleep(300 * time.Millisecond)
	require.Empty(t, notes())

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css(`#notify`))))
	label, err := chromedp.Run(ctx, chromedp.Text(css(`#notify`)))
	require.NoError(t, err)
	require.Contains(t, label, "Notifications on")
	f.start("t3")
	require.Eventually(t, func() bool { return strings.Contains(notes(), "harness: thread t3 waits for you") }, 20*time.Second, 50*time.Millisecond)
	require.Contains(t, notes(), "confirmation 1-call_1")
	require.NotContains(t, notes(), "thread t1 ")
	require.NotContains(t, notes(), "thread t2 ")

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css(`#notify`)))) // off
	f.start("t4")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(`a[href="t/t4"]`))))
	time.Sleep(300 * time.Millisecond)
	require.NotContains(t, notes(), "thread t4")
}
