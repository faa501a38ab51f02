//go:build !linux

package thread_test

import "fmt"

// diskFullChild needs Linux's namespaces to mount a small file system.
func diskFullChild(string) int {
	fmt.Println("child: the disk-full test runs on Linux")
	return 2
}
