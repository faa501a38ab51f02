package serve

import (
	"github.com/seed-7cc7a084/harness/drive"
)

// remoteProgress is the store socket's ProgressSink: the progress events
// of the threads other processes drive through the socket (a harness run
// in a terminal, a worker) go to the same streams as those of the threads
// the server drives itself. The socket's server takes them only from the
// process that holds the thread (see package thread/socketstore); what
// drive.DecodeEvent does not take — a question, an event of another
// thread, anything unknown — is left out. Nothing of them is recorded.
type remoteProgress struct{ h *liveHub }

// Progress hands one event on, after counting the ones the other process
// dropped before it.
func (r remoteProgress) Progress(id string, data []byte, dropped int) {
	if dropped > 0 {
		r.h.lost(id, dropped)
	}
	e, err := drive.DecodeEvent(id, data)
	if err != nil {
		return
	}
	r.h.progress(id)(e)
}

// Ended lets go of what the hub keeps of the thread: its drive ended.
func (r remoteProgress) Ended(id string) { r.h.done(id) }

// lost counts n events of thread id that never reached the hub in every
// stream of the thread, as events a stream dropped itself.
func (h *liveHub) lost(id string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for f := range h.subs[id] {
		f.mu.Lock()
		f.dropped += n
		f.mu.Unlock()
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}
