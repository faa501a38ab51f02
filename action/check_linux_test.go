package action_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// decide decides spec in root, failing the test if deciding blocks (a
// FIFO's open waiting for a writer, a device read forever), and returns
// the record and how many bytes the Go heap handed out meanwhile.
func decide(t *testing.T, root string, spec facts.CheckSpec) (facts.CheckRecorded, uint64) {
	t.Helper()
	commands, err := tools.New(root)
	require.NoError(t, err)
	type result struct {
		rec   facts.CheckRecorded
		alloc uint64
	}
	done := make(chan result, 1)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rec := action.Decide(context.Background(), "a1", spec, action.CheckEnv{Root: root, Commands: commands})
		runtime.ReadMemStats(&after)
		done <- result{rec, after.TotalAlloc - before.TotalAlloc}
	}()
	select {
	case r := <-done:
		return r.rec, r.alloc
	case <-time.After(10 * time.Second):
		t.Fatalf("deciding %s on %s did not return within 10s: it blocks", spec.Name, spec.Target)
		panic("unreachable")
	}
}

// A check whose target is not a regular file fails, with the reason,
// instead of blocking on it (a FIFO) or reading it forever (a device).
func TestChecksOnSpecialFiles(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644))
	require.NoError(t, os.Symlink("pipe", filepath.Join(root, "pipe-link")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	targets := map[string]string{
		"pipe":      "pipe is a named pipe (FIFO), not a regular file",
		"pipe-link": "pipe-link is a named pipe (FIFO), not a regular file",
		"dir":       "dir is a directory, not a regular file",
	}
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat("/dev/zero", &st))
	if err := syscall.Mknod(filepath.Join(root, "zero"), syscall.S_IFCHR|0o666, int(st.Rdev)); err == nil {
		targets["zero"] = "zero is a character device, not a regular file"
	} else {
		t.Logf("no character device (%v): its case is left out", err)
	}
	for target, want := range targets {
		for _, spec := range []facts.CheckSpec{action.FileEquals(target, []byte("x")), action.FileContains(target, "x")} {
			t.Run(spec.Name+" "+target, func(t *testing.T) {
				rec, _ := decide(t, root, spec)
				require.Equal(t, facts.VerdictFail, rec.Verdict)
				require.Equal(t, want, rec.Reason)
			})
		}
	}
	// A link to /dev/zero leads out of the workspace: not decided.
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "abs-zero")))
	rec, _ := decide(t, root, action.FileEquals("abs-zero", []byte("x")))
	require.Equal(t, facts.VerdictFail, rec.Verdict)
	require.Contains(t, rec.Reason, "could not decide")
}

// Checks read what they need and no more: file_equals at most one byte
// past the expected size, file_contains a bounded stream, command_succeeds
// the tail of the output.
func TestChecksReadBounded(t *testing.T) {
	root := t.TempDir()
	sparse := func(name string, size int64) {
		f, err := os.Create(filepath.Join(root, name))
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))
		require.NoError(t, f.Close())
	}
	sparse("huge", 256<<20) // 256 MiB of zeros, no disk
	sparse("large", 70<<20) // past the 64 MiB file_contains reads
	// "needle" straddling file_contains's 64 KiB chunks.
	body := strings.Repeat("a", 64<<10-3) + "needle" + strings.Repeat("b", 100)
	require.NoError(t, os.WriteFile(filepath.Join(root, "chunks.txt"), []byte(body), 0o644))

	rec, alloc := decide(t, root, action.FileEquals("huge", []byte("abc")))
	require.Equal(t, facts.VerdictFail, rec.Verdict)
	require.Equal(t, "huge holds 268435456 bytes, more than the expected 3", rec.Reason)
	require.Less(t, alloc, uint64(1<<20), "file_equals read the file whole")

	rec, _ = decide(t, root, action.FileEquals("chunks.txt", []byte(body)))
	require.Equal(t, facts.VerdictPass, rec.Verdict, rec.Reason)
	rec, _ = decide(t, root, action.FileEquals("chunks.txt", []byte(body[1:])))
	require.Equal(t, facts.VerdictFail, rec.Verdict)
	rec, _ = decide(t, root, action.FileEquals("chunks.txt", []byte(body[1:]+"c")))
	require.Equal(t, facts.VerdictFail, rec.Verdict, "same size, other bytes")
	require.Contains(t, rec.Reason, "with sha256")

	rec, alloc = decide(t, root, action.FileContains("chunks.txt", "needle"))
	require.Equal(t, facts.VerdictPass, rec.Verdict, rec.Reason)
	require.Less(t, alloc, uint64(1<<20))
	rec, _ = decide(t, root, action.FileContains("chunks.txt", "needles"))
	require.Equal(t, facts.VerdictFail, rec.Verdict)
	require.Equal(t, `chunks.txt does not contain "needles"`, rec.Reason)
	rec, alloc = decide(t, root, action.FileContains("large", "x"))
	require.Equal(t, facts.VerdictFail, rec.Verdict)
	require.Equal(t, `could not decide: large is larger than the 64 MiB a check reads, and "x" is not in them`, rec.Reason)
	require.Less(t, alloc, uint64(1<<20), "file_contains held the file")

	// 20 MB of output: the reason shows its end, and it is not kept.
	rec, alloc = decide(t, root, action.CommandSucceeds("sh", "-c", `head -c 20000000 /dev/zero | tr '\0' a; echo; echo the-end; exit 3`))
	require.Equal(t, facts.VerdictFail, rec.Verdict)
	require.Contains(t, rec.Reason, "exited 3: ")
	require.True(t, strings.HasSuffix(rec.Reason, "the-end"), rec.Reason)
	require.Less(t, len(rec.Reason), 400)
	require.Less(t, alloc, uint64(4<<20), "command_succeeds kept the output")
}
