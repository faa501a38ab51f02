package thread_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

func Example() {
	dir, _ := os.MkdirTemp("", "harness-example")
	defer os.RemoveAll(dir)

	store, err := thread.OpenPebble(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx := context.Background()

	// A person posts a message: an ingress fact, idempotent under its key.
	msg, _ := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("post-1"),
		facts.UserMessage{Text: "fix the login bug"})
	head, err := store.Append(ctx, "fix-login", 0, msg)
	if err != nil {
		panic(err)
	}

	// A transition appends what it produced, after the head it folded.
	turn, _ := facts.NewDraft(facts.KindModelTurn, "infer/turn/1",
		facts.ModelTurn{Turn: 1, Text: "Looking at auth.go first."})
	if _, err := store.Append(ctx, "fix-login", head.Seq, turn); err != nil {
		panic(err)
	}

	for f, err := range store.Read(ctx, "fix-login", 1) {
		if err != nil {
			panic(err)
		}
		fmt.Println(f.Seq, f.Kind, f.Cause)
	}
	fmt.Println(store.Verify(ctx, "fix-login"))
	// Output:
	// 1 user.message ingress/post-1
	// 2 model.turn infer/turn/1
	// <nil>
}

// Two writers expect the same head; the one that loses catches up.
func ExampleConflictError() {
	dir, _ := os.MkdirTemp("", "harness-example")
	defer os.RemoveAll(dir)
	store, err := thread.OpenPebble(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx := context.Background()

	a, _ := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("a"), facts.UserMessage{Text: "from a"})
	b, _ := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("b"), facts.UserMessage{Text: "from b"})
	if _, err := store.Append(ctx, "t1", 0, a); err != nil {
		panic(err)
	}
	_, err = store.Append(ctx, "t1", 0, b) // b also expected an empty thread
	var conflict *thread.ConflictError
	if errors.As(err, &conflict) {
		fmt.Println(err)
		_, err = store.Append(ctx, "t1", conflict.Actual.Seq, b)
	}
	fmt.Println(err)

	// Posting a again is refused: it is already done.
	_, err = store.Append(ctx, "t1", 2, a)
	fmt.Println(errors.Is(err, thread.ErrDuplicateCause), err)
	// Output:
	// append to t1 after seq 0: head is at seq 1: head moved
	// <nil>
	// true append to t1: cause "ingress/a" is at seq 1: cause already appended
}
