package demo_test

import (
	"context"
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/demo"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

// summary tells the demo briefly: where the thread stood, and what the
// record says of each worker.
type summary struct{}

func (summary) Workspace(string, bool) {}
func (summary) Fact(facts.Fact)        {}
func (summary) Parked(st drive.State) {
	fmt.Printf("thread %s %s on a %s\n", st.Thread, st.Status, st.Waits[0].Kind)
}
func (summary) Answered(drive.State) {}
func (summary) Done(st drive.State, _ audit.Audit) {
	fmt.Printf("thread %s %s\n", st.Thread, st.Status)
}
func (summary) Workers(ws []demo.Worker) {
	for _, w := range ws {
		check := "none"
		if w.Check != nil {
			check = string(w.Check.Verdict)
		}
		fmt.Printf("%s reported %s: effect %s, check %s\n", w.Name, w.Report.Status, w.EffectState, check)
	}
}
func (summary) Verified(_ audit.Audit, err error) { fmt.Println("verified:", err == nil) }

// The demo, run from Go, with no git: every line is read from the log.
func Example() {
	dir, err := os.MkdirTemp("", "demo-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if _, err := demo.Run(context.Background(), demo.Options{Dir: dir}, summary{}); err != nil {
		panic(err)
	}
	// Output:
	// thread demo parked on a confirmation
	// thread demo done
	// diligent reported succeeded: effect observed, check pass
	// busy reported succeeded: effect observed, check fail
	// idle reported succeeded: effect unknown, check fail
	// unwatched reported succeeded: effect reported, check pass
	// verified: true
}
