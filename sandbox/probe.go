package sandbox

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// minABI is the oldest Landlock ABI the sandbox runs on: ABI 3 is the
// first that controls truncate(2), without which a command could empty
// any file it can name. maxABI is the newest whose rights it uses
// (ABI 9 adds the control of connects to named Unix sockets).
const (
	minABI = 3
	maxABI = 9
)

// Support is what this system offers the sandbox, as Probe found it.
type Support struct {
	// UserNamespaces reports whether a process can be started in new user,
	// PID, mount and network namespaces and mount a /proc there.
	UserNamespaces bool
	// LandlockABI is the kernel's Landlock ABI version, 0 without
	// Landlock.
	LandlockABI int
	// Missing says, one line each, what is missing and why.
	Missing []string
}

// Err is nil when the sandbox can run here, else an error wrapping
// ErrUnavailable that says what is missing.
func (s Support) Err() error {
	if len(s.Missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (only mode off runs commands without it)", ErrUnavailable, strings.Join(s.Missing, "; "))
}

// Probe reports what this system offers the sandbox. The kernel is asked
// once per process (a trial helper is started in new namespaces); the
// features in simulate and in the environment variable SimulateEnv are
// then reported missing, as if the kernel lacked them.
func Probe(simulate ...Feature) Support {
	s := probeSystem()
	s.Missing = slices.Clone(s.Missing)
	for _, f := range simulatedMissing(simulate) {
		switch f {
		case UserNamespaces:
			if s.UserNamespaces {
				s.UserNamespaces = false
				s.Missing = append(s.Missing, "user namespaces are missing (simulated)")
			}
		case Landlock:
			if s.LandlockABI > 0 {
				s.LandlockABI = 0
				s.Missing = append(s.Missing, "Landlock is missing (simulated)")
			}
		default: // fail closed: a misspelt knob does not leave the sandbox on by accident
			s.Missing = append(s.Missing, fmt.Sprintf("%s names %q, which is not %q or %q", SimulateEnv, f, UserNamespaces, Landlock))
		}
	}
	return s
}

// simulatedMissing is simulate and what SimulateEnv names.
func simulatedMissing(simulate []Feature) []Feature {
	out := slices.Clone(simulate)
	for f := range strings.SplitSeq(os.Getenv(SimulateEnv), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, Feature(f))
		}
	}
	return out
}

// Check reports whether s can run here: nil when it is valid and the
// system offers what its mode needs (mode Off needs nothing), else an
// error wrapping ErrInvalidSpec or ErrUnavailable that says why.
func (s Spec) Check() error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Mode == Off {
		return nil
	}
	if err := Probe(s.SimulateMissing...).Err(); err != nil {
		return fmt.Errorf("mode %s: %w", s.Mode, err)
	}
	return nil
}
