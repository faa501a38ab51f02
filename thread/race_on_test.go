//go:build race

package thread

// raceOn is whether the race detector is on (see race_off_test.go).
const raceOn = true
