package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Until serves until ctx is done, the server stops, or — with idle > 0 —
// nobody has used it for idle; it reports whether it stopped for being
// idle. A server that failed is the error.
func (h *Hosted) Until(ctx context.Context, idle time.Duration) (idled bool, err error) {
	var tick <-chan time.Time
	if idle > 0 {
		t := time.NewTicker(min(idle/4+time.Millisecond, time.Second))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case err := <-h.Done():
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				return false, fmt.Errorf("serve: %w", err)
			}
			return false, nil
		case <-tick:
			if since := h.IdleSince(); !since.IsZero() && time.Since(since) > idle {
				return true, nil
			}
		}
	}
}
