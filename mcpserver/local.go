package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// Local is the Workspace (and Peeker) of a directory on this machine, as
// harness mcp serve opens it: each request opens the workspace's session
// the way a command of the command line opens it (through Front: its
// place, environment, wait and warnings), with the same layer of
// settings over the files every time, and closes it after. The store is
// held only for the request, so that the person's own commands share it.
type Local struct {
	// Front opens the sessions; it says what the person should know.
	Front *stock.Front
	// Flags is the server's own layer of settings (stock.FlagLayer) and
	// Harness more runtime options (an output schema), for every request.
	Flags   stock.SettingsSource
	Harness []harness.Option
	// Model is the model spec the server was given ("": a thread's own,
	// else the settings'), relative to ModelDir; ModelOptions are the
	// options it is loaded with.
	Model        string
	ModelDir     string
	ModelOptions []model.Option
	// Prepare, when set, is run once a request's session is made, before
	// its store is opened (create: the request may make the store): to
	// start a server of the workspace when its settings ask for one.
	Prepare func(ctx context.Context, s *stock.Session, create bool) error
	// OpenStore opens a session's store; nil is Front.Open. A front end
	// sets it to say what to do when the store cannot be opened.
	OpenStore func(ctx context.Context, s *stock.Session) error
	// Driver makes the driver of a request's session, given the model
	// loaded for it (nil: one is loaded when a turn is due) and its spec,
	// and the options its threads are driven with; nil drives them as
	// stock.Driver.Options says, telling nothing.
	Driver func(s *stock.Session, m model.Model, spec string) (*stock.Driver, drive.Options, error)
}

// Open opens the workspace for one request (Workspace). A request that
// may start a thread (req.Create) needs a model: req.Model, else the
// server's, else the settings'; none is ErrNoModel, naming the settings
// file. Its MCP servers are started only for a request that may drive.
func (l *Local) Open(ctx context.Context, req OpenRequest) (*Opened, error) {
	o := stock.SessionOptions{Drive: true, Create: req.Create}
	if req.Drive {
		o.MCP = ctx
	}
	var m model.Model
	spec := ""
	if req.Create {
		o.Model, o.ModelSpec = stock.ModelNeeded, cmp.Or(req.Model, l.Model)
	} else if l.Model != "" {
		var err error
		if spec, m, err = l.loadModel(); err != nil {
			return nil, err
		}
	}
	p, err := l.Front.Place()
	if err != nil {
		return nil, err
	}
	o.ModelDir = p.Root
	s, err := l.session(p, o)
	if errors.Is(err, stock.ErrNoModel) {
		return nil, fmt.Errorf("%w: name one (model: openai:MODEL, anthropic:MODEL or scripted:FILE), or set \"model\" in %s", stock.ErrNoModel, p.SettingsFile())
	}
	if err != nil {
		return nil, err
	}
	opened, err := l.open(ctx, s, req.Create, m, spec)
	if err != nil {
		s.Close()
		return nil, err
	}
	return opened, nil
}

// open opens the session's store and makes its driver; m and spec are
// the model loaded already, if any.
func (l *Local) open(ctx context.Context, s *stock.Session, create bool, m model.Model, spec string) (*Opened, error) {
	if create {
		var err error
		if m, err = stock.LoadModel(s.Model); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		spec = s.Model
	}
	if l.Prepare != nil {
		if err := l.Prepare(ctx, s, create); err != nil {
			return nil, err
		}
	}
	if err := l.openStore(ctx, s); err != nil {
		return nil, err
	}
	l.Front.WarnMCP(s)
	newDriver := l.Driver
	if newDriver == nil {
		newDriver = func(s *stock.Session, m model.Model, spec string) (*stock.Driver, drive.Options, error) {
			d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m, Spec: spec})
			if err != nil {
				return nil, drive.Options{}, err
			}
			return d, d.Options(), nil
		}
	}
	d, opts, err := newDriver(s, m, spec)
	if err != nil {
		return nil, err
	}
	return &Opened{Runtime: d.Runtime, Actor: s.Stock.Actor, Drive: opts, Close: s.Close, AnswerPending: s.AnswerPending}, nil
}

// Peek reads the workspace's store for the server's subscriptions while
// other processes hold it (Peeker; stock.Session.Peeker): opened only
// when its files changed, and closed at once.
func (l *Local) Peek(ctx context.Context) (drive.Peek, func(), error) {
	p, err := l.Front.Place()
	if err != nil {
		return nil, nil, err
	}
	s, err := l.session(p, stock.SessionOptions{Lenient: true})
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	if err := l.openStore(ctx, s); err != nil {
		return nil, nil, err
	}
	peek, done := s.Peeker()
	return peek, done, nil
}

// session makes the session of the place as o says, with the server's
// layer and runtime options.
func (l *Local) session(p stock.Place, o stock.SessionOptions) (*stock.Session, error) {
	o.Flags = l.Flags
	o.Harness = append(o.Harness, l.Harness...)
	return l.Front.NewSession(p, o)
}

// openStore opens the session's store (OpenStore, else Front.Open).
func (l *Local) openStore(ctx context.Context, s *stock.Session) error {
	if l.OpenStore != nil {
		return l.OpenStore(ctx, s)
	}
	return l.Front.Open(ctx, s)
}

// loadModel loads the server's model, its spec read relative to
// ModelDir: a spec that cannot be loaded is the request's error.
func (l *Local) loadModel() (string, model.Model, error) {
	spec, err := stock.ParseModelSpec(l.Model, l.ModelDir)
	if err != nil {
		return "", nil, err
	}
	m, err := stock.LoadModel(spec, l.ModelOptions...)
	if err != nil {
		return "", nil, fmt.Errorf("model: %w", err)
	}
	return spec, m, nil
}
