package socketstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// One process holds a Pebble store and serves it; another reads and
// appends through the socket of the store's directory.
func Example() {
	dir, _ := os.MkdirTemp("", "harness-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// The holder.
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ln, err := socketstore.Listen(dir)
	if err != nil {
		panic(err)
	}
	srv := socketstore.NewServer(store, harness.Hold)
	go srv.Serve(ln)
	defer srv.Close()

	// Anyone else.
	c, err := socketstore.Dial(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	d, _ := facts.NewDraft(facts.KindUserMessage, "ingress/hello", facts.UserMessage{Text: "hello"})
	h, err := c.Append(ctx, "t1", 0, d)
	if err != nil {
		panic(err)
	}
	fmt.Println("appended seq", h.Seq)
	// The same cause again is refused, as the store itself refuses it.
	_, err = c.Append(ctx, "t1", 1, d)
	fmt.Println("again:", errors.Is(err, thread.ErrDuplicateCause))

	// A lease holds the thread in the holder's process.
	held, release, err := c.Lease(ctx, "t1")
	if err != nil {
		panic(err)
	}
	fmt.Println("held:", held.Err() == nil)
	release()
	// Output:
	// appended seq 1
	// again: true
	// held: true
}
