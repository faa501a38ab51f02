package harness_test

import (
	"context"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

// reading is the Pebble store, saying where each Read starts.
type reading struct {
	*thread.PebbleStore
	mu    sync.Mutex
	froms []uint64
}

func (r *reading) Read(ctx context.Context, id string, from uint64) iter.Seq2[facts.Fact, error] {
	r.mu.Lock()
	r.froms = append(r.froms, max(from, 1))
	r.mu.Unlock()
	return r.PebbleStore.Read(ctx, id, from)
}

// reads returns where the Reads since the last call started.
func (r *reading) reads() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.froms
	r.froms = nil
	return out
}

// blind is the Pebble store keeping no snapshots.
type blind struct{ thread.Store }

func (b blind) Backing() thread.Store { return b }

// sameRecord is a log as two runs of one thread write it alike: the kind
// and cause of each fact (when it was appended, and the times a tool's
// report says it ran, differ).
func sameRecord(log []facts.Fact) []string {
	out := make([]string, len(log))
	for i, f := range log {
		out[i] = string(f.Kind) + " " + f.Cause
	}
	return out
}

// compactScript reads twice, then writes (which asks for a confirmation),
// then says it is done: with WithCompactAt small, the conversation is
// compacted before every turn after the first.
const compactScript = `{"text": "Reading a.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"text": "Reading b.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b\"}"}]}
{"text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"c\"}"}]}
{"text": "Done."}`

// A parked thread read by a new Thread starts from its snapshot: it reads
// only the snapshot's fact and what came after, answers and resumes from
// there — the conversation of a compacted thread from the compaction on —
// and ends with the log a run without snapshots writes.
func TestResumeFromSnapshot(t *testing.T) {
	for _, compacted := range []bool{false, true} {
		name := map[bool]string{false: "never compacted", true: "compacted"}[compacted]
		t.Run(name, func(t *testing.T) {
			var opts []harness.Option
			if compacted {
				opts = append(opts, func(c *harness.Config) { c.CompactAt = 5 })
			}
			e := harnesstest.New(t, compactScript, opts...)
			out, err := e.RT.Start(ctx, e.Actor, "t", "Read a and b, then write c.")
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, out.Status)
			snap, err := e.Store.LatestSnapshot(ctx, "t")
			require.NoError(t, err)
			require.Equal(t, out.Seq, snap.Seq, "the Resume that parked kept a snapshot where it parked")

			r := &reading{PebbleStore: e.Store}
			rt, err := harness.NewRuntime(r, e.RT.Services, e.RT.Config)
			require.NoError(t, err)
			th := rt.Thread(e.Actor, "t")
			v, err := th.View(ctx)
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, v.Status)
			require.Equal(t, []uint64{snap.Seq, snap.Seq + 1}, r.reads(), "the snapshot's fact, then the facts after it")
			_, err = th.Post(ctx, approval(t, v.Waits[0].RequestID), "approve")
			require.NoError(t, err)
			out, err = th.Resume(ctx)
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status)
			froms := r.reads()
			if compacted {
				require.NotContains(t, froms, uint64(1), "the conversation is read from the compacted context")
			} else {
				require.Contains(t, froms, uint64(1), "a thread never compacted: its conversation is the whole log")
			}
			require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))

			// The same thread on a store that keeps no snapshots.
			ref := harnesstest.New(t, compactScript, opts...)
			refRT, err := harness.NewRuntime(blind{ref.Store}, ref.RT.Services, ref.RT.Config)
			require.NoError(t, err)
			_, err = refRT.Start(ctx, ref.Actor, "t", "Read a and b, then write c.")
			require.NoError(t, err)
			refTh := refRT.Thread(ref.Actor, "t")
			_, err = refTh.Post(ctx, approval(t, v.Waits[0].RequestID), "approve")
			require.NoError(t, err)
			_, err = refTh.Resume(ctx)
			require.NoError(t, err)
			_, err = ref.Store.LatestSnapshot(ctx, "t")
			require.ErrorIs(t, err, thread.ErrNoSnapshot)
			require.Equal(t, sameRecord(ref.Log("t")), sameRecord(e.Log("t")), "the same facts, resumed from a snapshot or not")
			require.Equal(t, ref.Model.Last(), e.Model.Last(), "the model was shown the same conversation")
			if compacted {
				require.Contains(t, e.Kinds("t"), facts.KindContextCompacted)
			}
		})
	}
}

func approval(t *testing.T, request string) facts.Draft {
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: request, Approved: true, By: "ana"})
	require.NoError(t, err)
	return d
}

// versioned is a part of an actor that keeps nothing but its version in
// its snapshots.
type versioned struct{ version uint32 }

func (v *versioned) Name() string                          { return "versioned" }
func (v *versioned) Step(facts.Fact) error                 { return nil }
func (v *versioned) Output() fold.Output[harness.Services] { return fold.Output[harness.Services]{} }
func (v *versioned) SnapshotVersion() uint32               { return v.version }
func (v *versioned) Snapshot() ([]byte, error)             { return nil, nil }
func (v *versioned) Restore([]byte, fold.Prefix) error     { return nil }
func withVersioned(a harness.Actor, version uint32) harness.Actor {
	return harness.Actor{Name: a.Name, New: func() []fold.Component[harness.Services] {
		return append(a.New(), &versioned{version})
	}}
}

// A snapshot that does not fit is ignored, and the log is folded from its
// first fact: one of an older version of the fold or of a part, one whose
// record is damaged, one made at another seq. The thread reads the same
// whatever the snapshot. (One that is not of this log is refused: see
// TestSnapshotThatDisagreesIsRefused.)
func TestSnapshotThatDoesNotFitIsIgnored(t *testing.T) {
	cases := []struct {
		name string
		// spoil changes the snapshot of t at seq; actor is the actor that
		// reads it.
		spoil func(t *testing.T, e *harnesstest.Env, seq uint64)
		newer bool // read by a newer version of a part
	}{
		{name: "of an older format", spoil: func(t *testing.T, e *harnesstest.Env, seq uint64) {
			s, err := e.Store.LatestSnapshot(ctx, "t")
			require.NoError(t, err)
			s.Data = append([]byte{fold.SnapshotFormat - 1}, s.Data[1:]...)
			require.NoError(t, e.Store.PutSnapshot(ctx, s))
		}},
		{name: "of an older version of a part", newer: true, spoil: func(*testing.T, *harnesstest.Env, uint64) {}},
		{name: "damaged", spoil: func(t *testing.T, e *harnesstest.Env, seq uint64) {
			e.Raw(func(db *pebble.DB) {
				v, closer, err := db.Get(harnesstest.SnapshotKey("t", seq))
				require.NoError(t, err)
				rec := slices.Clone(v)
				require.NoError(t, closer.Close())
				rec[len(rec)/2] ^= 0x20
				require.NoError(t, db.Set(harnesstest.SnapshotKey("t", seq), rec, pebble.Sync))
			})
		}},
		{name: "made at another seq", spoil: func(t *testing.T, e *harnesstest.Env, seq uint64) {
			var earlier, latest thread.Snapshot
			for s, err := range e.Store.ListSnapshots(ctx, "t") {
				require.NoError(t, err)
				earlier, latest = latest, s
			}
			require.NotZero(t, earlier.Seq, "an earlier snapshot")
			latest.Data = earlier.Data
			require.NoError(t, e.Store.PutSnapshot(ctx, latest))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Three steps a Resume: each keeps a snapshot where it stops.
			e := harnesstest.New(t, compactScript, harness.WithMaxSteps(3))
			actor := withVersioned(e.Actor, 1)
			for _, id := range []string{"t", "other"} {
				out, err := e.RT.Start(ctx, actor, id, "Read a and b, then write c.")
				require.NoError(t, err)
				for out.Status == harness.StatusStepLimit {
					out, err = e.RT.Resume(ctx, actor, id)
					require.NoError(t, err)
				}
				require.Equal(t, harness.StatusParked, out.Status)
			}
			latest, err := e.Store.LatestSnapshot(ctx, "t")
			require.NoError(t, err)
			want, err := e.RT.View(ctx, actor, "t")
			require.NoError(t, err)
			require.Equal(t, latest.Seq, want.Head.Seq)

			tc.spoil(t, e, latest.Seq)
			if tc.newer {
				actor = withVersioned(e.Actor, 2)
			}
			r := &reading{PebbleStore: e.Store}
			rt, err := harness.NewRuntime(r, e.RT.Services, e.RT.Config)
			require.NoError(t, err)
			th := rt.Thread(actor, "t")
			got, err := th.View(ctx)
			require.NoError(t, err)
			require.Equal(t, want, got, "the thread reads the same")
			froms := r.reads()
			require.Equal(t, uint64(1), froms[len(froms)-1], "the log is folded from its first fact (reads from %v)", froms)

			// The Resume that finds it parked keeps a snapshot that fits.
			out, err := th.Resume(ctx)
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, out.Status)
			r.reads()
			again := rt.Thread(actor, "t")
			_, err = again.View(ctx)
			require.NoError(t, err)
			require.Equal(t, []uint64{latest.Seq, latest.Seq + 1}, r.reads(), "a snapshot that fits again")
		})
	}
}

// A snapshot that disagrees with the log is refused, naming the seq: one
// whose hash is not the hash of the log's fact at its seq (copied from
// another thread, or the log rewritten before it with every hash
// recomputed), or one a fact after which does not link to it. Nothing
// resumes, and no fold from the first fact carries on over it.
func TestSnapshotThatDisagreesIsRefused(t *testing.T) {
	cases := []struct {
		name string
		// spoil changes the store; it returns the seq the refusal names.
		spoil func(t *testing.T, e *harnesstest.Env, snaps []thread.Snapshot) uint64
	}{
		{name: "another thread's", spoil: func(t *testing.T, e *harnesstest.Env, snaps []thread.Snapshot) uint64 {
			seq := snaps[len(snaps)-1].Seq
			e.Raw(func(db *pebble.DB) {
				v, closer, err := db.Get(harnesstest.SnapshotKey("other", seq))
				require.NoError(t, err)
				rec := slices.Clone(v)
				require.NoError(t, closer.Close())
				require.NoError(t, db.Set(harnesstest.SnapshotKey("t", seq), rec, pebble.Sync))
			})
			return seq
		}},
		{name: "a fact after it changed", spoil: func(t *testing.T, e *harnesstest.Env, snaps []thread.Snapshot) uint64 {
			// The earliest snapshot is the latest left; the fact after it
			// is changed in place, so the one after that no longer links.
			seq := snaps[0].Seq
			log := e.Log("t")
			require.Greater(t, len(log), int(seq)+1)
			e.Raw(func(db *pebble.DB) {
				for _, s := range snaps[1:] {
					require.NoError(t, db.Delete(harnesstest.SnapshotKey("t", s.Seq), pebble.Sync))
				}
				f := log[seq] // seq+1
				f.At = f.At.Add(time.Nanosecond)
				b, err := facts.Encode(f)
				require.NoError(t, err)
				require.NoError(t, db.Set(harnesstest.FactKey("t", f.Seq), b, pebble.Sync))
			})
			return seq + 2
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := harnesstest.New(t, compactScript, harness.WithMaxSteps(3))
			for _, id := range []string{"t", "other"} {
				out, err := e.RT.Start(ctx, e.Actor, id, "Read a and b, then write c.")
				require.NoError(t, err)
				for out.Status == harness.StatusStepLimit {
					out, err = e.RT.Resume(ctx, e.Actor, id)
					require.NoError(t, err)
				}
				require.Equal(t, harness.StatusParked, out.Status)
			}
			var snaps []thread.Snapshot
			for s, err := range e.Store.ListSnapshots(ctx, "t") {
				require.NoError(t, err)
				snaps = append(snaps, s)
			}
			require.Greater(t, len(snaps), 1)
			seq := tc.spoil(t, e, snaps)
			head := e.Log("t")[len(e.Log("t"))-1].Seq

			rt, err := harness.NewRuntime(e.Store, e.RT.Services, e.RT.Config)
			require.NoError(t, err)
			_, err = rt.Resume(ctx, e.Actor, "t")
			require.ErrorIs(t, err, harness.ErrNotItsSnapshot)
			require.ErrorIs(t, err, thread.ErrCorrupt)
			var ce *thread.CorruptError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, seq, ce.Seq, "the refusal names the seq: %v", err)
			_, err = rt.Thread(e.Actor, "t").View(ctx)
			require.ErrorIs(t, err, harness.ErrNotItsSnapshot)
			require.Equal(t, head, e.Log("t")[len(e.Log("t"))-1].Seq, "nothing was appended")
		})
	}
}
