package natsstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// ExampleOpen opens a store on an embedded JetStream server, appends a
// fact, and reads the thread back. In production the server runs on its
// own and Open (or Dial) is given its URL.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "natsstore-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		log.Fatal(err)
	}
	srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		log.Fatal("server not ready")
	}

	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	store, err := natsstore.Open(ctx, nc) // creates the stream HARNESS
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("req-1"), facts.UserMessage{Text: "fix the login bug"})
	if err != nil {
		log.Fatal(err)
	}
	head, err := store.Append(ctx, "fix-login.1", 0, d)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("head at seq", head.Seq)
	if _, err := store.Append(ctx, "fix-login.1", head.Seq, d); err != nil {
		fmt.Println("posted again:", err)
	}
	for f, err := range store.Read(ctx, "fix-login.1", 1) {
		if err != nil {
			log.Fatal(err)
		}
		m, _ := facts.Decode[facts.UserMessage](f)
		fmt.Println(f.Seq, f.Kind, m.Text)
	}
	// Output:
	// head at seq 1
	// posted again: append to fix-login.1: cause "ingress/req-1" is at seq 1: cause already appended
	// 1 user.message fix the login bug
}
