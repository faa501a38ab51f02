package sandbox

import "testing"

// SetRuntimeRoots moves the roots of the runtime directory's two places
// (/run/user and /tmp) for the test t, so that the tests of RuntimeDir
// never touch the user's own. Only this package's tests have it.
func SetRuntimeRoots(t testing.TB, runUser, tmp string) {
	oldRun, oldTmp := runUserRoot, tmpRoot
	runUserRoot, tmpRoot = runUser, tmp
	t.Cleanup(func() { runUserRoot, tmpRoot = oldRun, oldTmp })
}

// NestedBegin and NestedEnd are what a command's start and end tell n:
// the tests of the rules that decide when a reading may stand in for the
// walk.
func NestedBegin(n *Nested, names []string) ([]string, bool) { return n.begin(names) }

// NestedEnd: see NestedBegin.
func NestedEnd(n *Nested) { n.end() }
