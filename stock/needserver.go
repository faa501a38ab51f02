package stock

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// ErrNoServer: a command that works only through a harness server (a
// worker of a store in a directory) found none holding the store.
var ErrNoServer = errors.New("no harness server holds the store")

// NeedServer checks that a harness server holds the place's store when
// it is a directory (a NATS store needs none): a worker takes its work
// from that server. With none, the error says what to start.
func NeedServer(ctx context.Context, p Place) error {
	if p.Remote != "" {
		return nil
	}
	c, err := socketstore.Dial(ctx, p.Store)
	if errors.Is(err, socketstore.ErrNoServer) {
		return fmt.Errorf("%w %s: a worker of a store in a directory takes its work from the server that holds it", ErrNoServer, p.Store)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	if !c.Info().Work {
		return fmt.Errorf("the harness server holding %s (pid %d) %w: it is of an older version; stop it and start harness serve again", p.Store, c.Info().PID, socketstore.ErrNoWork)
	}
	return nil
}

// WhoDrives says who drives a thread submitted to a store.
type WhoDrives struct {
	// By is "workers" on a NATS store (harness worker on it), "serve"
	// when the harness server holding a store in a directory drives
	// submitted threads itself, "worker" when it does not but workers of
	// other processes take work from it, and "" when nobody will: the
	// thread waits for harness resume.
	By string
	// Server is what the server holding the store said of itself when
	// the store was opened through it (zero if none holds it).
	Server socketstore.Info
}

// DriverOf says who drives a thread submitted to the session's store (see
// Driver), as the server holding it said when the store was opened.
func (s *Session) DriverOf() WhoDrives {
	if s.Place.Remote != "" {
		return WhoDrives{By: "workers"}
	}
	c := servedBy(s.Store)
	if c == nil {
		return WhoDrives{}
	}
	d := WhoDrives{Server: c.Info()}
	switch {
	case d.Server.Drives > 0:
		d.By = "serve"
	case d.Server.Workers > 0:
		d.By = "worker"
	}
	return d
}
