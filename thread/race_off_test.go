//go:build !race

package thread

// raceOn is whether the race detector is on: it makes sync.Pool drop
// some of what is put back, so counts of allocations differ.
const raceOn = false
