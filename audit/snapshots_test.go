package audit_test

import (
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

// stepScript reads, reads again, then writes: with a step limit of 3, its
// Resumes stop four times, each keeping a snapshot.
const stepScript = `{"text": "Reading a.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"text": "Reading b.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b\"}"}]}
{"text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"c\"}"}]}
{"text": "Done."}`

// snapshotted returns an env whose thread t is parked, with snapshots
// kept along the way (some by Threads restored from the one before).
func snapshotted(t *testing.T) *harnesstest.Env {
	e := harnesstest.New(t, stepScript, harness.WithMaxSteps(3), func(c *harness.Config) { c.CompactAt = 5 })
	out, err := e.RT.Start(ctx, e.Actor, "t", "Read a and b, then write c.")
	require.NoError(t, err)
	for out.Status == harness.StatusStepLimit {
		out, err = e.Thread("t").Resume(ctx) // a new Thread: from the snapshot
		require.NoError(t, err)
	}
	require.Equal(t, harness.StatusParked, out.Status)
	return e
}

func snapshotSeqs(t *testing.T, e *harnesstest.Env) []uint64 {
	var out []uint64
	for s, err := range e.Store.ListSnapshots(ctx, "t") {
		require.NoError(t, err)
		out = append(out, s.Seq)
	}
	return out
}

// Every snapshot kept is the fold of the log at its seq, whether the
// Thread that kept it folded the log from its first fact or from the
// snapshot before; VerifyLog checks each.
func TestVerifyChecksSnapshots(t *testing.T) {
	e := snapshotted(t)
	require.Len(t, snapshotSeqs(t, e), thread.KeptSnapshots)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))
}

// A damaged snapshot, one copied under another seq, and one whose bytes
// read but are not the fold's, are each reported by VerifyLog, naming
// the seq — after the log itself verifies.
func TestVerifyReportsABadSnapshot(t *testing.T) {
	cases := map[string]func(t *testing.T, e *harnesstest.Env, seqs []uint64) uint64{
		"damaged": func(t *testing.T, e *harnesstest.Env, seqs []uint64) uint64 {
			at := seqs[1]
			e.Raw(func(db *pebble.DB) {
				v, closer, err := db.Get(harnesstest.SnapshotKey("t", at))
				require.NoError(t, err)
				rec := slices.Clone(v)
				require.NoError(t, closer.Close())
				rec[40] ^= 0x01
				require.NoError(t, db.Set(harnesstest.SnapshotKey("t", at), rec, pebble.Sync))
			})
			return at
		},
		"another seq's, put as this one's": func(t *testing.T, e *harnesstest.Env, seqs []uint64) uint64 {
			var snaps []thread.Snapshot
			for s, err := range e.Store.ListSnapshots(ctx, "t") {
				require.NoError(t, err)
				snaps = append(snaps, s)
			}
			wrong := snaps[2]
			wrong.Data = snaps[1].Data
			require.NoError(t, e.Store.PutSnapshot(ctx, wrong))
			return wrong.Seq
		},
		"not the fold's": func(t *testing.T, e *harnesstest.Env, seqs []uint64) uint64 {
			s, err := e.Store.LatestSnapshot(ctx, "t")
			require.NoError(t, err)
			s.Data = flipSystem(t, e, s)
			require.NoError(t, e.Store.PutSnapshot(ctx, s))
			return s.Seq
		},
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			e := snapshotted(t)
			seqs := snapshotSeqs(t, e)
			at := spoil(t, e, seqs)
			err := audit.VerifyLog(ctx, e.Store, e.Actor, "t")
			var se *audit.SnapshotMismatchError
			require.ErrorAs(t, err, &se, "%v", err)
			require.ErrorIs(t, err, audit.ErrSnapshotMismatch)
			require.Equal(t, at, se.Seq)
			t.Log(err)

			// The thread still reads as its log says: a resume ignores a
			// snapshot that is damaged or does not restore (one that
			// restores but is wrong only a verifier can tell).
			want, err := e.Thread("t").View(ctx)
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, want.Status)
		})
	}
}

// flipSystem returns the snapshot's bytes with the system part's
// "configured" flag flipped: a snapshot that restores, but says the
// thread was never configured.
func flipSystem(t *testing.T, e *harnesstest.Env, s thread.Snapshot) []byte {
	// Rebuild the envelope: decode it as fold.Restore reads it, and write
	// it again with the flag flipped.
	d := fold.NewDecoder("t", s.Data[1:])
	var enc fold.Encoder
	seq := d.Uint()
	enc.Uint(seq)
	defect := d.Bool()
	enc.Bool(defect)
	require.False(t, defect)
	n := d.Count()
	enc.Uint(uint64(n))
	for range n {
		enc.String(d.String())
		enc.Uint(d.Uint())
		enc.String(d.String())
	}
	comps := d.Count()
	enc.Uint(uint64(comps))
	flipped := false
	for range comps {
		name, version, b := d.String(), d.Uint(), d.Bytes()
		if name == "system" {
			b = []byte{b[0] ^ 1}
			flipped = true
		}
		enc.String(name)
		enc.Uint(version)
		enc.Bytes(b)
	}
	require.NoError(t, d.Finish())
	require.True(t, flipped)
	return append([]byte{fold.SnapshotFormat}, enc.Data()...)
}
