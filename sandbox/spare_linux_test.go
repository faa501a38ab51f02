package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// childrenOf lists the live (not zombie) children of pid.
func childrenOf(pid int) []int {
	var out []int
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			c, err := strconv.Atoi(s)
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c))
			if err == nil && !strings.Contains(string(stat), ") Z ") {
				out = append(out, c)
			}
		}
	}
	return out
}

// spareOf waits until the launcher has exactly one live child, no
// command running: the spare helper it started for the next command.
func spareOf(t *testing.T, launcher int, not ...int) int {
	t.Helper()
	var spare int
	require.Eventually(t, func() bool {
		kids := childrenOf(launcher)
		if len(kids) != 1 {
			return false
		}
		for _, n := range not {
			if kids[0] == n {
				return false
			}
		}
		spare = kids[0]
		return true
	}, 10*time.Second, 5*time.Millisecond, "a spare helper")
	return spare
}

// namespaces are what a command's shell says of its namespaces.
// (The sandbox makes no IPC or UTS namespace.)
const namespaces = "readlink /proc/self/ns/user /proc/self/ns/mnt /proc/self/ns/pid /proc/self/ns/net"

// The launcher starts the next command's helper while the current one
// runs (a spare: its Go runtime's start and its namespaces are then not
// part of the next command's start), and each command still runs in a
// helper and namespaces of its own that served no command before: the
// spare is the next command's helper; every namespace differs between
// two commands. A spare that dies before its command is replaced (the
// command runs in a helper started for it), and so is one of another
// network setting.
func TestSpareHelperServesTheNextCommand(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	spec := defaultSpec(t)
	c0, _ := startSleep(t, spec)
	launcher := parentOf(t, c0.Pid())
	c0.Kill()
	_, _ = c0.Wait()

	out1, e := run(t, spec, namespaces)
	require.Equal(t, 0, e.Code, out1)
	spare := spareOf(t, launcher, c0.Pid())
	c := &sandbox.Cmd{Spec: spec, Line: "sleep 30"}
	require.NoError(t, c.Start(t.Context()))
	require.Equal(t, spare, c.Pid(), "the spare is the command's helper")
	c.Kill()
	_, _ = c.Wait()

	out2, e := run(t, spec, namespaces)
	require.Equal(t, 0, e.Code, out2)
	ns1, ns2 := strings.Fields(out1), strings.Fields(out2)
	require.Len(t, ns1, 4)
	require.Len(t, ns2, 4)
	for i := range ns1 {
		require.NotEqual(t, ns1[i], ns2[i], "two commands share a namespace")
	}
	self, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	require.NotContains(t, ns2, self, "no network: a network namespace of its own")

	// A spare killed before its command: the command runs all the same,
	// in a helper of its own.
	dead := spareOf(t, launcher)
	require.NoError(t, syscall.Kill(dead, syscall.SIGKILL))
	require.Eventually(t, func() bool { return len(childrenOf(launcher)) == 0 }, 10*time.Second, 5*time.Millisecond)
	c = &sandbox.Cmd{Spec: spec, Line: "sleep 30"}
	require.NoError(t, c.Start(t.Context()))
	require.NotEqual(t, dead, c.Pid())
	c.Kill()
	_, _ = c.Wait()

	// A command with the network gets none of the spares made for
	// commands without (nor they one made for it).
	netSpec := spec.Clone()
	netSpec.Network = true
	noNet := spareOf(t, launcher)
	out, e := run(t, netSpec, "readlink /proc/self/ns/net")
	require.Equal(t, 0, e.Code, out)
	require.Equal(t, self, strings.TrimSpace(out), "the network: the harness's namespace")
	out, e = run(t, spec, "readlink /proc/self/ns/net")
	require.Equal(t, 0, e.Code, out)
	require.NotEqual(t, self, strings.TrimSpace(out))
	require.NotContains(t, childrenOf(launcher), noNet, "a spare of another setting is not kept")
}
