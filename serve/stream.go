package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// An event stream (Server-Sent Events): each fact of a thread is an event
// "fact" whose id is its seq, so a client that reconnects with
// Last-Event-ID goes on where it stopped. A quiet stream sends a comment
// every KeepAlive, and every write must reach the client within
// WriteTimeout, or the stream ends: a client that stops reading is let
// go, and so is one that goes away.

// startStream answers with an event stream and returns its writer.
func startStream(w http.ResponseWriter) *bufio.Writer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return bufio.NewWriterSize(w, 32<<10)
}

// flush sends what the stream holds, within the write timeout.
func (s *Server) flush(w http.ResponseWriter, bw *bufio.Writer) error {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	if err := bw.Flush(); err != nil {
		return err
	}
	return rc.Flush()
}

// streamFrom is where a stream begins: after Last-Event-ID, else at
// ?from=, else at the first fact.
func streamFrom(r *http.Request) (uint64, error) {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return 0, badRequest("Last-Event-ID %q: want the seq of the last fact seen", id)
		}
		return n + 1, nil
	}
	return seqParam(r, "from", 1)
}

// streamThread streams the thread's facts from seq from, each as the
// event the encoder named name renders it, until the client goes, a write
// times out, or the server closes. The facts before the stream caught up
// come from the store; the new ones from the thread's tail, read once for
// every stream of the thread.
func (s *Server) streamThread(w http.ResponseWriter, r *http.Request, id string, from uint64, name string, event func(facts.Fact) (string, error)) error {
	if _, err := s.store.Head(r.Context(), id); err != nil {
		return err
	}
	tail, unwatch := s.hub.watch(id)
	defer unwatch()
	bw := startStream(w)
	fmt.Fprintf(bw, "retry: 2000\n\n")
	if err := s.flush(w, bw); err != nil {
		return nil
	}
	ctx := r.Context()
	next := max(from, 1)
	rc := http.NewResponseController(w)
	send := func(seq uint64, data string) bool {
		if !s.sendEvent(w, rc, bw, strconv.FormatUint(seq, 10), "fact", []byte(data)) {
			return false
		}
		next = seq + 1
		return true
	}
	fail := func(err error) error {
		if ctx.Err() == nil {
			fmt.Fprintf(bw, "event: error\ndata: %s\n\n", jsonLine(map[string]string{"error": err.Error()}))
			s.flush(w, bw)
		}
		return nil
	}
	// Catch up from the store.
	for f, err := range s.store.Read(ctx, id, next) {
		if err != nil {
			return fail(err)
		}
		data, err := event(f)
		if err != nil || !send(f.Seq, data) {
			return nil
		}
	}
	keep := time.NewTicker(s.opts.KeepAlive)
	defer keep.Stop()
	for {
		changed := s.hub.changed(id) // taken before reading: no append is missed
		batch, err := tail.since(ctx, s.store, id, next)
		if err != nil {
			return fail(err)
		}
		for _, e := range batch {
			data, err := e.encoded(name, event)
			if err != nil || !send(e.fact.Seq, data) {
				return nil
			}
		}
		if s.flush(w, bw) != nil {
			return nil
		}
		select {
		case <-changed:
		case <-keep.C:
			fmt.Fprint(bw, ": alive\n\n")
		case <-ctx.Done():
			return nil
		case <-s.ctx.Done():
			return nil
		}
	}
}

// jsonLine is v as JSON on one line.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return `{"error": "unencodable"}`
	}
	return string(b)
}

func (s *Server) apiStream(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	from, err := streamFrom(r)
	if err != nil {
		return err
	}
	return s.streamThread(w, r, id, from, "json", func(f facts.Fact) (string, error) {
		b, err := json.Marshal(f)
		return string(b), err
	})
}

// listDebounce gathers the appends of a moment into one event of the
// list's stream.
const listDebounce = 150 * time.Millisecond

// streamList sends an event "threads" whenever a thread moved (at most
// one per listDebounce), until the client goes.
func (s *Server) streamList(w http.ResponseWriter, r *http.Request) error {
	unwatch := s.hub.watchList()
	defer unwatch()
	bw := startStream(w)
	fmt.Fprintf(bw, "retry: 2000\n\n")
	if err := s.flush(w, bw); err != nil {
		return nil
	}
	ctx := r.Context()
	keep := time.NewTicker(s.opts.KeepAlive)
	defer keep.Stop()
	for {
		changed := s.hub.anyChanged()
		select {
		case <-changed:
			select {
			case <-time.After(listDebounce):
			case <-ctx.Done():
				return nil
			}
			fmt.Fprint(bw, "event: threads\ndata: {}\n\n")
		case <-keep.C:
			fmt.Fprint(bw, ": alive\n\n")
		case <-ctx.Done():
			return nil
		case <-s.ctx.Done():
			return nil
		}
		if s.flush(w, bw) != nil {
			return nil
		}
	}
}
