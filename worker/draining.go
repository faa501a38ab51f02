package worker

import (
	"context"
	"os"
	"os/signal"
)

// RunDraining runs the worker (Run) until ctx is done and its drives have
// drained, as a worker process does: once ctx is done (the first signal),
// any of the signals again received interrupts what still runs at once
// (Interrupt), and beside, when set, runs meanwhile — the search index
// following the store, say — and goes on until the worker has drained;
// its context ends then, and RunDraining returns once beside has.
func (w *Worker) RunDraining(ctx context.Context, beside func(context.Context), again ...os.Signal) error {
	ran := make(chan struct{})
	defer close(ran)
	if len(again) > 0 {
		go func() {
			select {
			case <-ctx.Done():
			case <-ran:
				return
			}
			// Only now: the first signal is ctx's, never this one.
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, again...)
			defer signal.Stop(sigs)
			select {
			case <-sigs:
				w.Interrupt()
			case <-ran:
			}
		}()
	}
	if beside != nil {
		bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		besideDone := make(chan struct{})
		go func() {
			defer close(besideDone)
			beside(bctx)
		}()
		defer func() { stop(); <-besideDone }()
	}
	return w.Run(ctx)
}

// Start runs the worker (Run) in the background, until stop: stop ends
// its context, waits until it has drained, and returns what Run returned
// — nil after a drain, whatever the context's end was.
func (w *Worker) Start(ctx context.Context) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}
