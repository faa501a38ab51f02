package main

import (
	"context"
	"errors"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// cmdWaitServe waits up to 60 seconds until a server answers on the
// socket of the store in the directory STORE (a harness serve started in
// the background): waitserve STORE. Its socket file is there once bound,
// a moment before it listens; a command run before the server holds the
// store would open the store itself and keep the server out.
func cmdWaitServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitserve STORE")
	}
	dir := ts.MkAbs(args[0])
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := socketstore.Dial(ctx, dir)
		cancel()
		if err == nil {
			c.Close()
			return
		}
		if !errors.Is(err, socketstore.ErrNoServer) || time.Now().After(deadline) {
			ts.Fatalf("no server answers on the socket of %s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
