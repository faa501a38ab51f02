package model

import "context"

// WithSpec returns m, answering each turn with Decision.Model set to spec
// (unless m set it): the model that actually ran a turn, which a thread
// records and prices it by — under `resume --model other` not the one the
// thread recorded when it started. A Streamer stays one.
func WithSpec(m Model, spec string) Model {
	s := specced{m: m, spec: spec}
	if st, ok := m.(Streamer); ok {
		return speccedStreamer{specced: s, st: st}
	}
	return s
}

type specced struct {
	m    Model
	spec string
}

func (s specced) Turn(ctx context.Context, req Request) (Decision, error) {
	d, err := s.m.Turn(ctx, req)
	return s.named(d), err
}

func (s specced) named(d Decision) Decision {
	if d.Model == "" {
		d.Model = s.spec
	}
	return d
}

type speccedStreamer struct {
	specced
	st Streamer
}

func (s speccedStreamer) Stream(ctx context.Context, req Request, onText func(delta string)) (Decision, error) {
	d, err := s.st.Stream(ctx, req, onText)
	return s.named(d), err
}
