package stock

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/harness"
)

// RuntimeIn builds a runtime as Runtime does, but of the stock harness
// made again in the directory root — a scratch copy of the workspace, as
// a live rerun acts in — on the session's store: its tools, observer and
// sandbox act in root, and a thread it configures records root as its
// workspace. The session's own workspace is never root: that is an
// error. free closes the runtime's observer and the scratch stock's MCP
// servers.
func (s *Session) RuntimeIn(root string, opts ...RuntimeOption) (rt *harness.Runtime, actor harness.Actor, free func(), err error) {
	var o runtimeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if s.Store == nil {
		return nil, harness.Actor{}, nil, ErrSessionClosed
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, harness.Actor{}, nil, err
	}
	if same, _ := filepath.Abs(s.Place.Root); same == abs {
		return nil, harness.Actor{}, nil, fmt.Errorf("a scratch workspace %s: %w", abs, errors.New("it is the session's own workspace"))
	}
	p := s.Place
	p.Root, p.Within = abs, ""
	st, err := s.stockOf(p)
	if err != nil {
		return nil, harness.Actor{}, nil, fmt.Errorf("a scratch workspace %s: %w", abs, err)
	}
	svc, err := st.Services(o.model, BlobsOf(s.Store), o.observe...)
	if err != nil {
		st.Close()
		return nil, harness.Actor{}, nil, err
	}
	rt, err = s.newRuntime(svc, st.Config, o)
	free = func() {
		if c, ok := svc.Observer.(io.Closer); ok {
			c.Close()
		}
		st.Close()
	}
	if err != nil {
		free()
		return nil, harness.Actor{}, nil, err
	}
	return rt, st.Actor, free, nil
}
