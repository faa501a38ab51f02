package harness_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any leaves a goroutine running:
// the runtimes raced in the tests, and the readers of crash children's
// output, must all have ended.
func TestMain(m *testing.M) {
	// The test binary re-executed as a process of a test (see
	// changed_test.go).
	if trigger := os.Getenv(changedServerEnv); trigger != "" {
		os.Exit(runChangedServer(trigger))
	}
	if spec := os.Getenv(changedChildEnv); spec != "" {
		os.Exit(runChangedChild(spec))
	}
	goleak.VerifyTestMain(m)
}
