package thread_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/storetest"
)

func openStore(t testing.TB, dir string, opts ...thread.Option) *thread.PebbleStore {
	t.Helper()
	s, err := thread.OpenPebble(dir, opts...)
	require.NoError(t, err)
	return s
}

func TestPebbleConformance(t *testing.T) {
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) thread.Store { return openStore(t, t.TempDir()) },
		Reopen: func(t *testing.T, s thread.Store) thread.Store {
			dir := s.(*thread.PebbleStore).Dir()
			require.NoError(t, s.Close())
			return openStore(t, dir)
		},
	})
}

func draft(t testing.TB, cause, text string) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: text})
	require.NoError(t, err)
	return d
}

// fill appends n facts to id, three to an append where it can, the last two
// of each append sharing a cause.
func fill(t testing.TB, s thread.Store, id string, n int) {
	t.Helper()
	var after uint64
	for int(after) < n {
		k := min(3, n-int(after))
		ds := make([]facts.Draft, k)
		for i := range ds {
			cause := fmt.Sprintf("step/%d", after+1)
			if i > 0 {
				cause = fmt.Sprintf("step/%d/more", after+1)
			}
			ds[i] = draft(t, cause, fmt.Sprintf("fact %d", int(after)+i+1))
		}
		h, err := s.Append(context.Background(), id, after, ds...)
		require.NoError(t, err)
		after = h.Seq
	}
}

func TestWithClockStampsFacts(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	s := openStore(t, t.TempDir(), thread.WithClock(func() time.Time { return at }))
	defer s.Close()
	h, err := s.Append(context.Background(), "t1", 0, draft(t, "ingress/a", "x"))
	require.NoError(t, err)
	require.Equal(t, at.UTC(), h.At)
	for f, err := range s.Read(context.Background(), "t1", 1) {
		require.NoError(t, err)
		require.Equal(t, at.UTC(), f.At)
	}
}

// TestDamagedStore damages stored data through the raw database, as a bad
// disk, a bug or a person with a hex editor could, and checks that Read and
// Verify report it, naming thread and seq, and that nothing panics.
func TestDamagedStore(t *testing.T) {
	const n = 10
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, db *pebble.DB)
		// readSeq is the seq Read reports, or readsClean if Read does not
		// notice: the damage shows only in the hash chain or the index.
		readSeq int
		// verifySeq is the seq Verify names.
		verifySeq uint64
		says      string
	}{
		{"first byte of the first fact flipped", flip(1, 0), 1, 1, "checksum mismatch"},
		{"a payload byte of a middle fact flipped", flip(5, -10), 5, 5, "checksum mismatch"},
		{"the checksum of the last fact flipped", flip(n, -1), n, n, "checksum mismatch"},
		{"a fact truncated", edit(n/2, func(b []byte) []byte { return b[:len(b)/2] }), n / 2, n / 2, "checksum mismatch"},
		{"a fact emptied", edit(3, func([]byte) []byte { return nil }), 3, 3, "too short"},
		{"a fact from a future format", edit(4, func(b []byte) []byte {
			b = bytes.Clone(b[:len(b)-4])
			b[0] = 9
			return withCRC(b)
		}), 4, 4, "version 9"},
		{"a fact rewritten with a valid checksum", rewrite(4, func(f *facts.Fact) { f.Data = draft(t, "x", "forged").Data }), readsClean, 5, "prev is"},
		{"the last fact rewritten with a valid checksum", rewrite(n, func(f *facts.Fact) { f.Data = draft(t, "x", "forged").Data }), readsClean, n, "head record"},
		{"a fact filed under another seq", func(t *testing.T, db *pebble.DB) {
			v, closer, err := db.Get(thread.FactKey("t1", 7))
			require.NoError(t, err)
			v = bytes.Clone(v)
			require.NoError(t, closer.Close())
			require.NoError(t, db.Set(thread.FactKey("t1", 6), v, pebble.Sync))
		}, 6, 6, "says seq 7"},
		{"a fact deleted", func(t *testing.T, db *pebble.DB) {
			require.NoError(t, db.Delete(thread.FactKey("t1", 6), pebble.Sync))
		}, 6, 6, "missing"},
		{"the last fact deleted", func(t *testing.T, db *pebble.DB) {
			require.NoError(t, db.Delete(thread.FactKey("t1", n), pebble.Sync))
		}, n, n, "missing"},
		{"a fact past the head", func(t *testing.T, db *pebble.DB) {
			v, closer, err := db.Get(thread.FactKey("t1", n))
			require.NoError(t, err)
			v = bytes.Clone(v)
			require.NoError(t, closer.Close())
			require.NoError(t, db.Set(thread.FactKey("t1", n+1), v, pebble.Sync))
		}, n + 1, n + 1, "beyond the head"},
		{"the head record flipped", func(t *testing.T, db *pebble.DB) {
			v, closer, err := db.Get(thread.HeadKey("t1"))
			require.NoError(t, err)
			v = bytes.Clone(v)
			require.NoError(t, closer.Close())
			v[3] ^= 0x40
			require.NoError(t, db.Set(thread.HeadKey("t1"), v, pebble.Sync))
		}, 0, 0, "head record checksum"},
		{"the head record deleted", func(t *testing.T, db *pebble.DB) {
			require.NoError(t, db.Delete(thread.HeadKey("t1"), pebble.Sync))
		}, 1, 1, "without a head record"},
		{"a cause dropped from the index", func(t *testing.T, db *pebble.DB) {
			require.NoError(t, db.Delete(thread.CauseKey("t1", "step/4"), pebble.Sync))
		}, readsClean, 4, `cause "step/4" is missing`},
		{"a cause indexed that never ran", func(t *testing.T, db *pebble.DB) {
			require.NoError(t, db.Set(thread.CauseKey("t1", "tool/execute/never"), []byte{0, 0, 0, 0, 0, 0, 0, 2}, pebble.Sync))
		}, readsClean, 2, `"tool/execute/never" at seq 2, whose cause is`},
		{"a cause indexed at the wrong seq", func(t *testing.T, db *pebble.DB) {
			require.NoError(t, db.Set(thread.CauseKey("t1", "step/7"), []byte{0, 0, 0, 0, 0, 0, 0, 8}, pebble.Sync))
		}, readsClean, 7, `later seq 8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, t.TempDir())
			defer s.Close()
			fill(t, s, "t1", n)
			fill(t, s, "t2", 3)
			require.NoError(t, s.Verify(ctx, "t1"))
			tc.damage(t, thread.RawDB(s))

			var readErr error
			var seqs []uint64
			require.NotPanics(t, func() {
				for f, err := range s.Read(ctx, "t1", 1) {
					if err != nil {
						readErr = err
						continue
					}
					seqs = append(seqs, f.Seq)
				}
			})
			if tc.readSeq == readsClean {
				require.NoError(t, readErr)
				require.Len(t, seqs, n)
			} else {
				requireCorrupt(t, readErr, uint64(tc.readSeq))
				require.Len(t, seqs, max(tc.readSeq-1, 0), "facts before the damage are read")
			}

			// Scan, which lends payloads, catches what Read catches,
			// at the same fact, after the same facts.
			var scanErr error
			var scanned []uint64
			require.NotPanics(t, func() {
				scanErr = s.Scan(ctx, "t1", 1, func(f facts.Fact) error {
					scanned = append(scanned, f.Seq)
					return nil
				})
			})
			require.Equal(t, seqs, scanned)
			if readErr == nil {
				require.NoError(t, scanErr)
			} else {
				require.EqualError(t, scanErr, readErr.Error())
				requireCorrupt(t, scanErr, uint64(tc.readSeq))
			}

			var verifyErr error
			require.NotPanics(t, func() { verifyErr = s.Verify(ctx, "t1") })
			requireCorrupt(t, verifyErr, tc.verifySeq)
			require.ErrorContains(t, verifyErr, tc.says)

			require.NoError(t, s.Verify(ctx, "t2"), "other threads are untouched")
		})
	}
}

const readsClean = -1

func requireCorrupt(t *testing.T, err error, seq uint64) {
	t.Helper()
	require.ErrorIs(t, err, thread.ErrCorrupt)
	var c *thread.CorruptError
	require.ErrorAs(t, err, &c)
	require.Equal(t, "t1", c.Thread)
	require.Equal(t, seq, c.Seq)
	if seq == 0 {
		require.ErrorContains(t, err, "thread t1: ")
	} else {
		require.ErrorContains(t, err, fmt.Sprintf("thread t1 seq %d: ", seq))
	}
}

// edit replaces the stored bytes of fact seq of t1 with change(bytes).
func edit(seq uint64, change func([]byte) []byte) func(*testing.T, *pebble.DB) {
	return func(t *testing.T, db *pebble.DB) {
		key := thread.FactKey("t1", seq)
		v, closer, err := db.Get(key)
		require.NoError(t, err)
		v = bytes.Clone(v)
		require.NoError(t, closer.Close())
		require.NoError(t, db.Set(key, change(v), pebble.Sync))
	}
}

// flip flips one byte of fact seq of t1: at i, or len+i if i is negative.
func flip(seq uint64, i int) func(*testing.T, *pebble.DB) {
	return edit(seq, func(b []byte) []byte {
		if i < 0 {
			i += len(b)
		}
		b[i] ^= 0x5a
		return b
	})
}

// rewrite re-encodes fact seq of t1 after change, with a valid checksum: a
// forgery only the hash chain reveals.
func rewrite(seq uint64, change func(*facts.Fact)) func(*testing.T, *pebble.DB) {
	return edit(seq, func(b []byte) []byte {
		f, err := facts.DecodeFact("t1", b)
		if err != nil {
			panic(err)
		}
		change(&f)
		out, err := facts.Encode(f)
		if err != nil {
			panic(err)
		}
		return out
	})
}

// A thread whose head record was lost, and whose facts are there, is not
// taken for a new thread: an append is refused as damage, and the facts
// are as they were. Before, the append went in at seq 1 over the first
// fact, its cause called new by the empty cause filter of a new thread.
func TestAppendRefusedWhereTheHeadRecordWasLost(t *testing.T) {
	ctx := context.Background()
	for _, lost := range []string{"head record", "head record and first facts"} {
		t.Run(lost, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			fill(t, s, "t1", 6)
			require.NoError(t, s.Close())
			s = openStore(t, dir)
			defer s.Close()
			db := thread.RawDB(s)
			require.NoError(t, db.Delete(thread.HeadKey("t1"), pebble.Sync))
			if lost != "head record" {
				for seq := uint64(1); seq <= 3; seq++ {
					require.NoError(t, db.Delete(thread.FactKey("t1", seq), pebble.Sync))
				}
			}
			before, closer, err := db.Get(thread.FactKey("t1", 4))
			require.NoError(t, err)
			before = bytes.Clone(before)
			require.NoError(t, closer.Close())

			_, err = s.Append(ctx, "t1", 0, draft(t, "step/1", "over the first fact"))
			requireCorrupt(t, err, 0)
			require.ErrorContains(t, err, "no head record")
			_, err = s.Append(ctx, "t1", 0, draft(t, "fresh", "again"))
			requireCorrupt(t, err, 0)

			after, closer, err := db.Get(thread.FactKey("t1", 4))
			require.NoError(t, err)
			require.Equal(t, before, after, "the stored facts are as they were")
			require.NoError(t, closer.Close())

			// Nor is it unknown to a reader: its head is damage.
			_, err = s.Head(ctx, "t1")
			requireCorrupt(t, err, 0)
			require.NotErrorIs(t, err, thread.ErrNotFound)

			// A thread that is new is appended to as before.
			_, err = s.Head(ctx, "t11")
			require.ErrorIs(t, err, thread.ErrNotFound)
			_, err = s.Append(ctx, "t11", 0, draft(t, "step/1", "new"))
			require.NoError(t, err)
		})
	}
}

func TestOpenTwiceInOneProcess(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	_, err := thread.OpenPebble(dir)
	require.ErrorIs(t, err, thread.ErrLocked)
	require.ErrorContains(t, err, "store "+dir+" is in use by another process")
	require.NoError(t, s.Close())
	s = openStore(t, dir)
	require.NoError(t, s.Close())
}

func TestOpenWhileAnotherProcessHoldsIt(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=hold:"+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	ready := make([]byte, len("ready\n"))
	_, err = io.ReadFull(stdout, ready)
	require.NoError(t, err, stderr.String())

	_, err = thread.OpenPebble(dir)
	require.ErrorIs(t, err, thread.ErrLocked)
	require.ErrorContains(t, err, "store "+dir+" is in use by another process")

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait(), stderr.String())
	s := openStore(t, dir)
	require.NoError(t, s.Close(), "the lock is released when the other process closes")
}

func TestOpenRefusesWhatIsNotAStore(t *testing.T) {
	t.Run("a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
		_, err := thread.OpenPebble(path)
		require.Error(t, err)
		require.NotErrorIs(t, err, thread.ErrLocked)
	})
	t.Run("another Pebble database", func(t *testing.T) {
		dir := t.TempDir()
		db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest, Logger: quietLogger{}})
		require.NoError(t, err)
		require.NoError(t, db.Set([]byte("k"), []byte("v"), pebble.Sync))
		require.NoError(t, db.Close())
		_, err = thread.OpenPebble(dir)
		require.ErrorContains(t, err, "not a harness store")
	})
}

func TestCloseWaitsForReads(t *testing.T) {
	s := openStore(t, t.TempDir())
	fill(t, s, "t1", 3)
	closed := make(chan error, 1)
	n := 0
	for _, err := range s.Read(context.Background(), "t1", 1) {
		require.NoError(t, err)
		n++
		if n == 1 {
			go func() { closed <- s.Close() }()
			// Close waits while this read is open.
			select {
			case err := <-closed:
				t.Fatalf("Close returned %v during a read", err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	require.Equal(t, 3, n)
	require.NoError(t, <-closed)
}

func TestAppendedFactsHashAsVerified(t *testing.T) {
	// The hash chain Verify checks is the one Fact.Hash computes: a fact
	// read back and exported to JSON parses to the same hash.
	s := openStore(t, t.TempDir())
	defer s.Close()
	fill(t, s, "t1", 5)
	var buf bytes.Buffer
	require.NoError(t, facts.WriteJSONSeq(&buf, s.Read(context.Background(), "t1", 1)))
	parsed, err := facts.ParseJSON(&buf)
	require.NoError(t, err)
	require.Len(t, parsed, 5)
	head, err := s.Head(context.Background(), "t1")
	require.NoError(t, err)
	require.Equal(t, head.Hash, parsed[4].Hash())
	require.True(t, strings.HasPrefix(parsed[0].Cause, "step/"))
}

// withCRC appends the CRC-32C frame checksum to b.
func withCRC(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// lockedBuffer is a bytes.Buffer a child process can write to while the
// test reads it. (harnesstest.LockedBuffer is the same for the tests above
// the runtime; thread's tests do not import the test kit, which would link
// every package of the module into them.)
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A store open in this process is open under every name of its directory:
// a symlink or a relative path to it is refused as in use, never opened a
// second time (two stores on one directory would both append seq 1).
func TestOpenTheSameDirectoryByAnotherName(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "store")
	s := openStore(t, dir)
	defer s.Close()
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(dir, link))
	_, err := thread.OpenPebble(link)
	require.ErrorIs(t, err, thread.ErrLocked)
	t.Chdir(base)
	_, err = thread.OpenPebble("store")
	require.ErrorIs(t, err, thread.ErrLocked)
}

// Chained passes on no fact the log's own links say was changed: a fact
// rewritten with a good checksum, in the middle or at the head, ends the
// reading with a CorruptError naming it, after the facts before.
func TestChainedStopsBeforeAChangedFact(t *testing.T) {
	ctx := context.Background()
	for _, changed := range []uint64{1, 5, 10} {
		s := openStore(t, t.TempDir())
		fill(t, s, "t1", 10)
		rewrite(changed, func(f *facts.Fact) { f.Data = draft(t, "x", "forged").Data })(t, thread.RawDB(s))
		head, err := s.Head(ctx, "t1")
		require.NoError(t, err)
		var seqs []uint64
		var broke error
		for f, err := range thread.Chained("t1", s.Read(ctx, "t1", 1), head) {
			if err != nil {
				broke = err
				break
			}
			seqs = append(seqs, f.Seq)
		}
		requireCorrupt(t, broke, changed)
		require.Len(t, seqs, int(changed-1), "the facts before it, not it")
		// From a later seq, the first fact read cannot be checked by the
		// one before it, but by the next.
		if changed > 1 {
			var n int
			for _, err := range thread.Chained("t1", s.Read(ctx, "t1", changed), head) {
				if err != nil {
					requireCorrupt(t, err, changed)
					break
				}
				n++
			}
			require.Zero(t, n)
		}
		s.Close()
	}
}
