//go:build !linux

package ask

// echoOff cannot turn off the echo of what is typed here: ok is false.
func echoOff(int) (restore func(), ok bool) { return func() {}, false }
