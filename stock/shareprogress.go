package stock

import (
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// ShareProgress is p (nil for none), and, while the session's store goes
// through a server (a harness server holds it: see OpenStore), each
// event handed over to that server too, so that its page and API show
// what the thread does as this process drives it (see
// socketstore.Client.Progress and drive.EncodeEvent). It never waits for
// the server: what the server cannot take in time is dropped, and no
// fact is made of any of it. (A store released and reopened — a person
// at a prompt — may go through a server the second time, or not: the
// events go where the store goes now.) A question a running action asks
// (drive.EventAsked) is not handed over: the question.asked fact carries
// it to every front end.
func (s *Session) ShareProgress(p drive.Progress) drive.Progress {
	if p == nil && servedBy(s.Store) == nil {
		return nil // nothing wants the events now
	}
	return func(e drive.Event) {
		if p != nil {
			p(e)
		}
		c := s.server.Load()
		if c == nil || e.Thread == "" || e.Kind == drive.EventAsked {
			return
		}
		if b, err := drive.EncodeEvent(e); err == nil {
			c.Progress(e.Thread, b)
		}
	}
}

// servedBy is the client of the server store goes through, or nil.
func servedBy(store thread.Store) *socketstore.Client {
	if store == nil {
		return nil
	}
	for _, st := range []thread.Store{store, store.Backing()} {
		if c, ok := st.(*socketstore.Client); ok {
			return c
		}
	}
	return nil
}
