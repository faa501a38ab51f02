package ask

import "golang.org/x/sys/unix"

// echoOff turns off the echo of what is typed at the terminal fd (lines
// are still edited, and Ctrl-C still interrupts); restore turns it back
// on. ok is false where it cannot be turned off.
func echoOff(fd int) (restore func(), ok bool) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}, false
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ECHONL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return func() {}, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }, true
}
