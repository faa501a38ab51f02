//go:build !unix

package action

import "time"

// processCPU is 0 where the process's CPU time is not read: the
// benchmarks then leave out their CPU ratios.
func processCPU() time.Duration { return 0 }
