package seal_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/thread"
)

// BenchmarkSeal seals a thread's head as a Resume that parks does (its
// first fact read from a real Pebble store, the witness log locked, its
// last line read, the entry signed, appended and synced), and, op by op
// in the same run, does the bare work: an ed25519 signature of a message
// of the same size and an append of a line of the same size, synced.
// ms/seal is the time of a seal (aim: ≤ 1); ratio is a seal's time over
// the bare work's (what locking, the chain and the first fact cost).
func BenchmarkSeal(b *testing.B) {
	s := store(b, 3)
	dir := b.TempDir()
	k, _, err := seal.OpenKey(filepath.Join(dir, seal.KeyFile))
	require.NoError(b, err)
	sl := &seal.Sealer{Key: k, Witness: &seal.Witness{Path: filepath.Join(dir, seal.WitnessFile)}, Store: s.Dir()}
	head, err := s.Head(ctx, "t")
	require.NoError(b, err)
	e, err := sl.Seal(ctx, s, head)
	require.NoError(b, err)
	msg := e.Message()
	line := make([]byte, 400)
	line[len(line)-1] = '\n'
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(b, err)
	raw, err := os.OpenFile(filepath.Join(b.TempDir(), "raw"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	require.NoError(b, err)
	b.Cleanup(func() { raw.Close() })

	var sealT, bareT time.Duration
	seq := uint64(0)
	for b.Loop() {
		seq++
		h := thread.Head{Thread: "t", Seq: head.Seq, Hash: facts.Hash{byte(seq), byte(seq >> 8), byte(seq >> 16)}}
		start := time.Now()
		if _, err := sl.Seal(ctx, s, h); err != nil {
			b.Fatal(err)
		}
		sealT += time.Since(start)

		start = time.Now()
		_ = ed25519.Sign(priv, msg)
		if _, err := raw.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := raw.Sync(); err != nil {
			b.Fatal(err)
		}
		bareT += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(sealT)/n/1e6, "ms/seal")
	b.ReportMetric(float64(bareT)/n/1e6, "ms/bare")
	b.ReportMetric(float64(sealT)/float64(bareT), "ratio")
}
