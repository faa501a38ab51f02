package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
	"github.com/seed-7cc7a084/harness/worker"
)

const (
	// defaultServeDrive is harness serve's --drive.
	defaultServeDrive = 4
	// serveSettle is how long a start or an answer waits before the
	// workers of a served store may take it (see socketstore.Work): a
	// command that drives the thread itself (run, approve --resume) has
	// held it or appended after it by then.
	serveSettle = 1500 * time.Millisecond
)

// cwdOrEmpty is the working directory, or "" if it cannot be told.
func cwdOrEmpty() string {
	cwd, _ := os.Getwd()
	return cwd
}

// serveWork has the server of a store in a directory drive n of the
// submitted threads at once beside the workers of other processes
// (worker.ServeWork), printing what it does on stderr. stop ends the
// drives (they drain, as a worker's do) and returns once they have.
func (a *app) serveWork(ctx context.Context, s *stock.Session, sv *serve.Hosted, work *socketstore.Work, n int) (stop func(), err error) {
	if err := checkModel(s.Model); n > 0 && err != nil {
		return nil, err
	}
	stopWork, err := worker.ServeWork(ctx, s, work, worker.Options{LoadModel: workerModels(s.Model), Concurrency: n, Progress: sv.DriveProgress,
		Log: func(e worker.Event) {
			if e.Kind != worker.EventTook { // the end says it
				tell.WorkerEvent(a.stderr, e, time.Now(), a.paint, workerHint)
			}
		}})
	if err != nil {
		return nil, err
	}
	return func() {
		if err := stopWork(); err != nil {
			fmt.Fprintf(a.stderr, "harness serve: %v\n", err)
		}
	}, nil
}

// checkModel loads spec, if any, so that a model that cannot be loaded
// is a usage error before anything runs.
func checkModel(spec string) error {
	if spec == "" {
		return nil
	}
	if _, err := stock.LoadModel(spec); err != nil {
		return asUsage(fmt.Errorf("--model: %w", err))
	}
	return nil
}

// submittedHint says who drives a thread just submitted, and how to
// follow it (or run it, when nobody will).
func submittedHint(id string, d stock.WhoDrives) string {
	srv := fmt.Sprintf("harness serve (pid %d%s)", d.Server.PID, orEmpty(", ", d.Server.URL))
	switch d.By {
	case "workers":
		return fmt.Sprintf("a worker on the store takes it up (harness worker); follow it with: harness log -f %s", id)
	case "serve":
		return fmt.Sprintf("%s drives it; follow it with: harness log -f %s", srv, id)
	case "worker":
		return fmt.Sprintf("a worker takes it up through %s; follow it with: harness log -f %s", srv, id)
	}
	if d.Server.PID != 0 {
		return fmt.Sprintf("nobody drives it: %s drives no threads (--drive 0) and no worker takes work from it; start one (harness worker), or run it with: harness resume %s", srv, id)
	}
	return fmt.Sprintf("no server holds the store, so nobody drives it: run it with harness resume %s, or start harness serve (it drives submitted threads)", id)
}

// serveDrivesLine says what harness serve does with submitted threads:
// asked is its --drive, drives what it does, model the model it gives a
// thread that recorded none.
func serveDrivesLine(asked, drives int, model string) string {
	switch {
	case drives > 0:
		return fmt.Sprintf("it drives submitted threads, %d at a time (model %s), beside any harness worker", drives, model)
	case asked == 0:
		return "it drives no submitted thread (--drive 0): harness worker takes them from it"
	}
	return "it drives no submitted thread, which records no model: start it with --model (or set the settings' model), or run harness worker"
}
