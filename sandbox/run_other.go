//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/seed-7cc7a084/harness/facts"
)

// process stands for a running helper; there is none here.
type process struct{}

// Start fails here: only Linux has the sandbox, and mode off is run by
// the caller.
func (c *Cmd) Start(ctx context.Context) error {
	if err := c.Spec.Check(); err != nil {
		return err
	}
	return fmt.Errorf("%w: mode off runs no sandbox; the caller runs the command", ErrInvalidSpec)
}

// Wait fails: nothing was started.
func (c *Cmd) Wait() (Exit, error) { return Exit{Code: -1}, errors.New("sandbox: Cmd not started") }

// Kill does nothing.
func (c *Cmd) Kill() {}

// Terminate does nothing.
func (c *Cmd) Terminate() {}

// Network is nil: nothing ran.
func (c *Cmd) Network() *facts.Network { return nil }

// Pid is 0.
func (c *Cmd) Pid() int { return 0 }

// probeSystem: nothing of the sandbox is here.
func probeSystem() Support {
	return Support{Missing: []string{fmt.Sprintf("the sandbox needs Linux (user namespaces and Landlock); this is %s", runtime.GOOS)}}
}

// helperProgram: there is no helper here.
func helperProgram() (string, bool) { return "", false }
