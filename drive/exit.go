package drive

import "github.com/seed-7cc7a084/harness/harness"

// ExitOf is the exit code of a command that leaves a thread in status,
// as a stream's result carries it (Result.Exit): 0 done (or resumable,
// or running elsewhere),
// 3 parked (it waits for a person), 1 otherwise.
func ExitOf(status harness.Status) int {
	switch status {
	case harness.StatusDone, harness.StatusResumable, StatusRunning:
		return 0
	case harness.StatusParked:
		return 3
	}
	return 1
}
