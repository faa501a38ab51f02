package drive

import (
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// ErrOtherOutputSchema: a command gave an output schema other than the
// one the thread was started with.
var ErrOtherOutputSchema = errors.New("not the thread's output schema")

// OutputSchema is the runtime option that starts threads whose final
// answer must be valid against schema (read from source, a file's name):
// it is compiled first, and one that is not a JSON Schema is an error
// wrapping scheduler.ErrOutputSchema. A thread records the schema it was
// started with (system.configured); a resume checks answers against that.
func OutputSchema(schema []byte, source string) (harness.Option, error) {
	if _, err := scheduler.CompileOutputSchema(schema); err != nil {
		return nil, err
	}
	return harness.WithOutputSchema(schema, source), nil
}

// SameOutputSchema returns nil when the thread of view v was started with
// the output schema schema (nil: none), else why not: an answer is checked
// against the schema recorded, never one a later command gives.
func SameOutputSchema(v harness.View, schema []byte) error {
	var recorded *facts.OutputSchema
	if sys := v.Turn.System; sys != nil {
		recorded = sys.Output
	}
	want := facts.SchemaDigest(schema)
	switch {
	case recorded == nil:
		return fmt.Errorf("%w: thread %s was started without one; start a new thread to check its answer", ErrOtherOutputSchema, v.Thread)
	case recorded.Digest != want:
		return fmt.Errorf("%w: thread %s was started with another (%s, %s); its answer is checked against that one", ErrOtherOutputSchema, v.Thread, recorded.Source, recorded.Digest)
	}
	return nil
}
