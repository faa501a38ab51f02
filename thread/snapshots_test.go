package thread_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// hashAt is the hash of the fact of id at seq.
func hashAt(t *testing.T, s thread.Store, id string, seq uint64) facts.Hash {
	t.Helper()
	for f, err := range s.Read(context.Background(), id, seq) {
		require.NoError(t, err)
		return f.Hash()
	}
	t.Fatalf("no fact %d of %s", seq, id)
	return facts.Hash{}
}

func TestSnapshots(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	defer s.Close()
	fill(t, s, "t", 20)
	fill(t, s, "u", 3)

	_, err := s.LatestSnapshot(ctx, "t")
	require.ErrorIs(t, err, thread.ErrNoSnapshot)

	put := func(seq uint64, data string) {
		t.Helper()
		require.NoError(t, s.PutSnapshot(ctx, thread.Snapshot{Thread: "t", Seq: seq, Hash: hashAt(t, s, "t", seq), Data: []byte(data)}))
	}
	seqs := func() []uint64 {
		t.Helper()
		var out []uint64
		for snap, err := range s.ListSnapshots(ctx, "t") {
			require.NoError(t, err)
			out = append(out, snap.Seq)
		}
		return out
	}
	put(3, "three")
	got, err := s.LatestSnapshot(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, thread.Snapshot{Thread: "t", Seq: 3, Hash: hashAt(t, s, "t", 3), Data: []byte("three")}, got)

	for seq := uint64(5); seq <= 11; seq += 2 {
		put(seq, "later")
	}
	require.Equal(t, []uint64{5, 7, 9, 11}, seqs(), "the newest KeptSnapshots are kept")
	put(9, "again")
	require.Equal(t, []uint64{5, 7, 9, 11}, seqs(), "a snapshot at a kept seq replaces it")
	put(2, "old")
	require.Equal(t, []uint64{5, 7, 9, 11}, seqs(), "one older than every kept snapshot is not kept")
	put(8, "between")
	require.Equal(t, []uint64{7, 8, 9, 11}, seqs())
	got, err = s.LatestSnapshot(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, uint64(11), got.Seq)
	_, err = s.LatestSnapshot(ctx, "u")
	require.ErrorIs(t, err, thread.ErrNoSnapshot, "snapshots are kept by thread")

	// Refused: nothing is kept.
	for name, snap := range map[string]thread.Snapshot{
		"seq 0":          {Thread: "t", Seq: 0},
		"past the head":  {Thread: "t", Seq: 21, Hash: hashAt(t, s, "t", 20)},
		"another's hash": {Thread: "t", Seq: 12, Hash: hashAt(t, s, "t", 13)},
		"bad thread id":  {Thread: "no/such", Seq: 1},
	} {
		require.Error(t, s.PutSnapshot(ctx, snap), name)
	}
	require.Equal(t, []uint64{7, 8, 9, 11}, seqs())

	seq, ok, err := s.CauseSeq(ctx, "t", "step/4")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(4), seq)
	_, ok, err = s.CauseSeq(ctx, "t", "step/99")
	require.NoError(t, err)
	require.False(t, ok)
}

// A damaged record, or one copied under another seq, is an error naming
// its seq; the listing goes on past it.
func TestSnapshotDamage(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	defer s.Close()
	fill(t, s, "t", 9)
	for _, seq := range []uint64{3, 6, 9} {
		require.NoError(t, s.PutSnapshot(ctx, thread.Snapshot{Thread: "t", Seq: seq, Hash: hashAt(t, s, "t", seq), Data: []byte("views")}))
	}
	db := thread.RawDB(s)
	v, closer, err := db.Get(thread.SnapshotKey("t", 6))
	require.NoError(t, err)
	flipped := append([]byte(nil), v...)
	closer.Close()
	flipped[len(flipped)/2] ^= 0x40
	require.NoError(t, db.Set(thread.SnapshotKey("t", 6), flipped, pebble.Sync))
	v, closer, err = db.Get(thread.SnapshotKey("t", 3))
	require.NoError(t, err)
	moved := append([]byte(nil), v...)
	closer.Close()
	require.NoError(t, db.Set(thread.SnapshotKey("t", 9), moved, pebble.Sync))

	var good []uint64
	var bad []uint64
	for snap, err := range s.ListSnapshots(ctx, "t") {
		var se *thread.SnapshotError
		if errors.As(err, &se) {
			require.ErrorIs(t, err, thread.ErrBadSnapshot)
			bad = append(bad, se.Seq)
			continue
		}
		require.NoError(t, err)
		good = append(good, snap.Seq)
	}
	require.Equal(t, []uint64{3}, good)
	require.Equal(t, []uint64{6, 9}, bad)
	_, err = s.LatestSnapshot(ctx, "t")
	require.ErrorIs(t, err, thread.ErrBadSnapshot)
}

// A store opened read-only keeps no snapshot, and says why; it still reads
// the ones kept.
func TestSnapshotReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	fill(t, s, "t", 4)
	require.NoError(t, s.PutSnapshot(ctx, thread.Snapshot{Thread: "t", Seq: 2, Hash: hashAt(t, s, "t", 2), Data: []byte("v")}))
	require.NoError(t, s.Close())
	ro := openStore(t, dir, thread.ReadOnly())
	defer ro.Close()
	err := ro.PutSnapshot(ctx, thread.Snapshot{Thread: "t", Seq: 4, Hash: hashAt(t, ro, "t", 4), Data: []byte("v")})
	require.ErrorIs(t, err, thread.ErrReadOnly)
	got, err := ro.LatestSnapshot(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, uint64(2), got.Seq)
}
