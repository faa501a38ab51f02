package rerun_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

var ctx = context.Background()

// TestMain fails the package's tests if any leaves a goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
