package stock_test

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"
)

var ctx = context.Background()

// TestMain fails the package's tests if any leaves a goroutine running.
// The user's configuration directory is one of the tests' own: a session
// that drives seals with a key made there.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stock-test-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}
