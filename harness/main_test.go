package harness_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any leaves a goroutine running:
// the runtimes raced in the tests, and the readers of crash children's
// output, must all have ended.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
