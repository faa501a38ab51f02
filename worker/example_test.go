package worker_test

import (
	"context"
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
	"github.com/seed-7cc7a084/harness/worker"
)

// A thread submitted to a NATS store, driven by a worker on it: here one
// worker in this process; on as many machines as run one, the same code.
func Example() {
	dir, _ := os.MkdirTemp("", "worker-example-")
	defer os.RemoveAll(dir)
	srv, err := natstest.StartServer(dir) // or your cluster: nats://a:4222,nats://b:4222,nats://c:4222
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown()
	ctx := context.Background()
	store, err := natsstore.Dial(ctx, srv.ClientURL())
	if err != nil {
		panic(err)
	}
	defer store.Close()

	script, _ := model.ParseScript("example", []byte(`{"text": "The TTL is 300 already."}`))
	tools, _ := harness.NewToolbox()
	cfg, _ := harness.NewConfig(harness.WithModelName("scripted"))
	actor, _ := harness.CodingActor(cfg, tools)

	// Start the thread for the workers: the prompt is recorded, nothing runs.
	rt, _ := harness.NewRuntime(store, harness.Services{Tools: tools}, cfg)
	if _, err := rt.Thread(actor, "cache-ttl").Submit(ctx, "Set the cache TTL to 300"); err != nil {
		panic(err)
	}

	work, err := store.Work(ctx)
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(ctx)
	w, err := worker.New(worker.Options{
		Store: store, Queue: worker.FromWork(work), Actor: actor,
		Runtime: func(id string) (*harness.Runtime, func(), error) {
			rt, err := harness.NewRuntime(store, harness.Services{Tools: tools}, cfg)
			return rt, func() {}, err
		},
		LoadModel: func(recorded string) (model.Model, error) { return script, nil },
		Log: func(e worker.Event) {
			if e.Kind == worker.EventStopped {
				fmt.Println(e.Thread, e.State.Status)
				stop() // drain: this example is over
			}
		},
	})
	if err != nil {
		panic(err)
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
	// Output: cache-ttl done
}
