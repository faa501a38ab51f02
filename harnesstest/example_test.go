package harnesstest_test

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// A test of a harness written with the kit: a real store, a scripted
// model that writes a file, a confirmation answered, and assertions on
// the facts. In a test, give New the *testing.T; an Example has none, so
// Run gives it a T, and returns what failed.
func Example() {
	err := harnesstest.Run(func(t harnesstest.T) {
		script := harnesstest.Script(
			harnesstest.Act("Setting the TTL.",
				harnesstest.Call("c1", "write_file", `{"path": "cache.toml", "content": "ttl_seconds = 300\n"}`)),
			harnesstest.Say("Done: the TTL is 300."),
		)
		env := harnesstest.New(t, script)
		ctx := context.Background()

		out, err := env.Thread("t1").Start(ctx, "Set the cache TTL to 300")
		if err != nil {
			t.Errorf("start: %v", err)
			t.FailNow()
		}
		fmt.Println(out.Status, out.Waits[0].Kind, out.Waits[0].RequestID)

		env.Approve("t1", out.Waits[0].RequestID, true)
		out, err = env.Thread("t1").Resume(ctx)
		if err != nil {
			t.Errorf("resume: %v", err)
			t.FailNow()
		}
		fmt.Println(out.Status, env.Runs.Load(), env.Args()[0])

		answer, err := facts.Decode[facts.ConfirmationAnswered](env.Last("t1", facts.KindConfirmationAnswered))
		if err != nil || !answer.Approved || out.Status != harness.StatusDone {
			t.Errorf("answer %+v, %v", answer, err)
		}
		fmt.Println(answer.By, env.Kinds("t1")[len(env.Kinds("t1"))-1])
	})
	fmt.Println("failed:", err)
	// Output:
	// parked confirmation 1-c1
	// done 1 {"path":"cache.toml","content":"ttl_seconds = 300\n"}
	// ana model.turn
	// failed: <nil>
}

// Run reports what failed: an Example whose assertion fails prints it.
func ExampleRun() {
	err := harnesstest.Run(func(t harnesstest.T) {
		env := harnesstest.New(t, harnesstest.Script(harnesstest.Say("Nothing to change.")))
		out, _ := env.Thread("t1").Start(context.Background(), "Set the cache TTL to 300")
		if out.Status != harness.StatusParked {
			t.Errorf("status %s, want parked", out.Status)
			t.FailNow()
		}
		fmt.Println("not reached")
	})
	fmt.Println(err)
	// Output: status done, want parked
}
