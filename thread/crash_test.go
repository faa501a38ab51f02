package thread_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// TestCrash kills a real process appending to a store at random moments
// (while it starts, opens the store, appends, syncs) and checks after each
// kill that every append it acknowledged is there, the chain verifies, seqs
// are contiguous and every batch was applied whole. The child is this test
// binary, run in the "append" mode of TestMain.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 30 processes")
	}
	const kills = 30
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var acknowledged []uint64
	for round := range kills {
		// Kill somewhere in the first 150ms: early ones land while the
		// child starts up or opens (and recovers) the store, later ones
		// mid-append.
		acked, stderr := runAndKill(t, dir, time.Duration(rng.IntN(150))*time.Millisecond)
		require.NotContains(t, stderr, "child:", "round %d: the child failed on its own", round)
		acknowledged = append(acknowledged, acked...)
		checkAfterCrash(t, dir, acknowledged)
	}
	t.Logf("%d appends acknowledged across %d kills", len(acknowledged), kills)
	require.NotEmpty(t, acknowledged, "the children appended nothing, so the test proved nothing")
}

// runAndKill starts an appending child, SIGKILLs it after delay, and returns
// the seqs it acknowledged.
func runAndKill(t *testing.T, dir string, delay time.Duration) (acked []uint64, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=append:"+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	require.NoError(t, cmd.Start())

	lines := make(chan []uint64)
	go func() {
		var seqs []uint64
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				// A line cut short by the kill was never acknowledged.
				break
			}
			seq, perr := strconv.ParseUint(strings.TrimSpace(line), 10, 64)
			if perr == nil {
				seqs = append(seqs, seq)
			}
		}
		lines <- seqs
	}()
	time.Sleep(delay)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no chance to clean up
	acked = <-lines                        // the pipe ends when the child is gone
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "child ended with %v: %s", err, errBuf.String())
	return acked, errBuf.String()
}

func checkAfterCrash(t *testing.T, dir string, acknowledged []uint64) {
	t.Helper()
	ctx := context.Background()
	s := openStore(t, dir)
	defer func() { require.NoError(t, s.Close()) }()
	head, err := s.Head(ctx, "crash")
	if errors.Is(err, thread.ErrNotFound) {
		require.Empty(t, acknowledged, "acknowledged appends are there")
		return // killed before the first append
	}
	require.NoError(t, err)
	require.NoError(t, s.Verify(ctx, "crash"))

	// Every batch is whole: cause crash/FIRST/N covers seqs FIRST..FIRST+N-1.
	ends := map[uint64]bool{} // last seq of each batch
	var want uint64 = 1
	var batchFirst, batchLen, batchSeen uint64
	for f, err := range s.Read(ctx, "crash", 1) {
		require.NoError(t, err)
		require.Equal(t, want, f.Seq, "seqs are contiguous")
		want++
		if batchSeen == batchLen {
			_, err := fmt.Sscanf(f.Cause, "crash/%d/%d", &batchFirst, &batchLen)
			require.NoError(t, err, f.Cause)
			require.Equal(t, f.Seq, batchFirst, "a batch starts where its cause says")
			batchSeen = 0
		}
		require.Equal(t, fmt.Sprintf("crash/%d/%d", batchFirst, batchLen), f.Cause, "seq %d belongs to its batch", f.Seq)
		_, err = facts.Decode[facts.UserMessage](f)
		require.NoError(t, err)
		batchSeen++
		if batchSeen == batchLen {
			ends[f.Seq] = true
		}
	}
	require.Equal(t, batchLen, batchSeen, "the last batch is whole")
	require.Equal(t, head.Seq, want-1)
	for _, seq := range acknowledged {
		require.True(t, ends[seq], "acknowledged append ending at seq %d is there (head %d)", seq, head.Seq)
	}
}
