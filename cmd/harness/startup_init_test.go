package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ownInitBytes bounds what a package of this module may allocate in its
// package initialization: every harness command, --help too, pays for
// every package's init. A compiled regexp, a parsed template, a reflect
// walk or a big table is more than this: make it at first use
// (sync.OnceValue).
const ownInitBytes = 8 << 10

// TestOwnInitsAreLight runs this test binary (whose packages are the
// command's and its tests') with GODEBUG=inittrace=1, running no test,
// and checks that each package of this module allocates little at init.
func TestOwnInitsAreLight(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "%s", stderr.String())
	line := regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	const ours = "github.com/seed-7cc7a084/harness"
	seen := 0
	for l := range strings.Lines(stderr.String()) {
		m := line.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || (m[1] != ours && !strings.HasPrefix(m[1], ours+"/")) {
			continue
		}
		seen++
		n, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		require.LessOrEqual(t, n, ownInitBytes, "%s allocates %d bytes (%s allocations) at init: move the work to first use", m[1], n, m[3])
	}
	require.NotZero(t, seen, "no init of this module traced:\n%s", stderr.String())
}
