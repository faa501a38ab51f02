//go:build race

package worker_test

// raceDetector: the race detector slows the worker processes several
// times over; the scale test runs at its -short size under it.
const raceDetector = true
