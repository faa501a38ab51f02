package drive

import (
	"context"
	"errors"
	"sync"

	"github.com/seed-7cc7a084/harness/model"
)

// lazy is the runtime's model while Drive runs with Options.LoadModel: the
// model is loaded when a model turn is first due. If it cannot be, the
// Resume that asked is cancelled (so the turn is not recorded as failed:
// the thread stays resumable) and failed says why.
type lazy struct {
	load func(recorded string) (model.Model, error)

	mu       sync.Mutex // guards m, recorded, cancel and err
	m        model.Model
	recorded string                  // the model the thread recorded, for load
	cancel   context.CancelCauseFunc // stops the Resume in progress
	err      error
}

// arm says, for one Resume, which model the thread recorded and how to
// stop the Resume if the model cannot be loaded; arm("", nil) disarms.
func (l *lazy) arm(recorded string, cancel context.CancelCauseFunc) {
	l.mu.Lock()
	l.recorded, l.cancel, l.err = recorded, cancel, nil
	l.mu.Unlock()
}

// failed returns why the model could not be loaded, if it could not.
func (l *lazy) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// get returns the model, loading it if it is not yet.
func (l *lazy) get() (model.Model, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m != nil {
		return l.m, nil
	}
	if l.cancel == nil {
		return nil, errors.New("drive: a model turn outside a Resume of Drive")
	}
	m, err := l.load(l.recorded)
	if err != nil {
		l.err = err
		l.cancel(err)
		return nil, err
	}
	l.m = m
	return m, nil
}

// Turn takes the turn with the model, loading it first if need be.
func (l *lazy) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	m, err := l.get()
	if err != nil {
		return model.Decision{}, err
	}
	return m.Turn(ctx, req)
}

// Stream takes the turn with the model, loading it first if need be,
// streaming its text when the model can (see model.Streamer).
func (l *lazy) Stream(ctx context.Context, req model.Request, onText func(string)) (model.Decision, error) {
	m, err := l.get()
	if err != nil {
		return model.Decision{}, err
	}
	if st, ok := m.(model.Streamer); ok {
		return st.Stream(ctx, req, onText)
	}
	return m.Turn(ctx, req)
}
