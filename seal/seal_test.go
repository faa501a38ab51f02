package seal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/thread"
)

var ctx = context.Background()

// store is a real Pebble store with thread t of n facts.
func store(t testing.TB, n int) *thread.PebbleStore {
	t.Helper()
	s, err := thread.OpenPebble(filepath.Join(t.TempDir(), "db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	for i := range n {
		d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(string(rune('a'+i))), facts.UserMessage{Text: "hello"})
		require.NoError(t, err)
		_, err = s.Append(ctx, "t", uint64(i), d)
		require.NoError(t, err)
	}
	return s
}

func sealer(t testing.TB, dir string) *seal.Sealer {
	t.Helper()
	k, made, err := seal.OpenKey(filepath.Join(dir, seal.KeyFile))
	require.NoError(t, err)
	require.True(t, made)
	return &seal.Sealer{Key: k, Witness: &seal.Witness{Path: filepath.Join(dir, seal.WitnessFile)}, Store: "s"}
}

// The key is made once, private to its owner, and read back the same; a
// key others may read is refused.
func TestKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seal")
	path := filepath.Join(dir, seal.KeyFile)
	k, made, err := seal.OpenKey(path)
	require.NoError(t, err)
	require.True(t, made)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	again, made, err := seal.OpenKey(path)
	require.NoError(t, err)
	require.False(t, made)
	require.Equal(t, k.Public(), again.Public())
	pk, err := seal.ParsePublicKey(string(k.Public()) + "\n")
	require.NoError(t, err)
	require.Equal(t, k.Public(), pk)
	require.True(t, pk.Verify([]byte("m"), k.Sign([]byte("m"))))

	require.NoError(t, os.Chmod(path, 0o644))
	_, _, err = seal.OpenKey(path)
	require.ErrorIs(t, err, seal.ErrKeyExposed)

	for _, bad := range []string{"", "ed25519:", "ed25519:AAAA", "rsa:AAAA", "ed25519:!!!"} {
		_, err := seal.ParsePublicKey(bad)
		require.ErrorIs(t, err, seal.ErrBadKey, bad)
	}
}

// Processes that make the key at once make one.
func TestKeyMadeOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seal", seal.KeyFile)
	var wg sync.WaitGroup
	keys := make([]seal.PublicKey, 8)
	for i := range keys {
		wg.Go(func() {
			k, _, err := seal.OpenKey(path)
			require.NoError(t, err)
			keys[i] = k.Public()
		})
	}
	wg.Wait()
	for _, k := range keys {
		require.Equal(t, keys[0], k)
	}
}

// Seals chain in the witness log; appending the same head again writes
// nothing; each holds against the log; a seal past the log's end, or of
// another fact at its seq, is broken.
func TestSealAndCheck(t *testing.T) {
	s := store(t, 3)
	sl := sealer(t, t.TempDir())
	head, err := s.Head(ctx, "t")
	require.NoError(t, err)
	first, err := sl.Seal(ctx, s, head)
	require.NoError(t, err)
	require.Empty(t, first.Prev)
	require.True(t, first.Signed())
	same, err := sl.Seal(ctx, s, head)
	require.NoError(t, err)
	require.Equal(t, first, same)

	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/z", facts.UserMessage{Text: "more"})
	require.NoError(t, err)
	head, err = s.Append(ctx, "t", 3, d)
	require.NoError(t, err)
	second, err := sl.Seal(ctx, s, head)
	require.NoError(t, err)
	require.NotEmpty(t, second.Prev)

	found, err := sl.Witness.Read()
	require.NoError(t, err)
	require.Len(t, found, 2)
	o := seal.CheckOptions{Store: "s", Trusted: []seal.PublicKey{sl.Key.Public()}}
	r, err := seal.Check(ctx, s, "t", found, o)
	require.NoError(t, err)
	require.NoError(t, r.Err())
	require.True(t, r.Sealed())
	latest, ok := r.Latest()
	require.True(t, ok)
	require.Equal(t, uint64(4), latest.Seq)

	// A seal past the end: the tail was cut.
	cut := found[1]
	cut.Seq = 9
	r, err = seal.Check(ctx, s, "t", []seal.Found{found[0], cut}, o)
	require.NoError(t, err)
	require.ErrorIs(t, r.Err(), seal.ErrSealBroken, "a changed entry's signature fails")
	cut.Sig = sl.Key.Sign(cut.Message())
	r, err = seal.Check(ctx, s, "t", []seal.Found{found[0], cut}, o)
	require.NoError(t, err)
	var be *seal.BrokenError
	require.ErrorAs(t, r.Err(), &be)
	require.Equal(t, uint64(9), be.Seq)
	require.Contains(t, be.Reason, "its tail was cut")

	// Another fact at its seq.
	other := found[0]
	other.Hash = facts.Hash{1}
	other.Sig = sl.Key.Sign(other.Message())
	r, err = seal.Check(ctx, s, "t", []seal.Found{other, found[1]}, o)
	require.NoError(t, err)
	require.ErrorAs(t, r.Err(), &be)
	require.Equal(t, uint64(3), be.Seq)
	require.Contains(t, be.Reason, "rewritten at or before seq 3")

	// Untrusted: reported, not checked; required and absent: refused.
	r, err = seal.Check(ctx, s, "t", found, seal.CheckOptions{Store: "s"})
	require.NoError(t, err)
	require.NoError(t, r.Err())
	require.False(t, r.Sealed())
	require.Equal(t, seal.StatusUnknownKey, r.Seals[0].Status)
	stranger := sealer(t, t.TempDir())
	r, err = seal.Check(ctx, s, "t", found, seal.CheckOptions{Store: "s", Require: []seal.PublicKey{stranger.Key.Public()}})
	require.NoError(t, err)
	require.ErrorIs(t, r.Err(), seal.ErrNoSealByKey)

	// A seal whose signature is another key's: broken, trusted or not.
	forged := found[1]
	forged.Sig = stranger.Key.Sign(forged.Message())
	r, err = seal.Check(ctx, s, "t", []seal.Found{forged}, seal.CheckOptions{Store: "s"})
	require.NoError(t, err)
	require.ErrorAs(t, r.Err(), &be)
	require.Contains(t, be.Reason, "signature does not verify")

	// Another store's thread of the same id: not this log's.
	elsewhere := found[1]
	elsewhere.Root, elsewhere.Store = facts.Hash{2}, "another"
	elsewhere.Sig = sl.Key.Sign(elsewhere.Message())
	r, err = seal.Check(ctx, s, "t", []seal.Found{elsewhere}, o)
	require.NoError(t, err)
	require.NoError(t, r.Err())
	require.Equal(t, 1, r.Elsewhere)
	require.Empty(t, r.Seals)
}

// The witness log's chain: a line changed, removed or put in breaks it
// at that line; a torn last line is not an entry, and is cut off by the
// next append, which chains to the last whole line.
func TestWitnessChain(t *testing.T) {
	s := store(t, 3)
	sl := sealer(t, t.TempDir())
	for seq := uint64(1); seq <= 3; seq++ {
		_, err := sl.Seal(ctx, s, thread.Head{Thread: "t", Seq: seq, Hash: facts.Hash{byte(seq)}})
		require.NoError(t, err)
	}
	b, err := os.ReadFile(sl.Witness.Path)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.Len(t, lines, 4) // three, and "" after the last newline

	write := func(s string) { require.NoError(t, os.WriteFile(sl.Witness.Path, []byte(s), 0o600)) }
	broken := func(line int) {
		t.Helper()
		_, err := sl.Witness.Read()
		var we *seal.WitnessError
		require.ErrorAs(t, err, &we)
		require.Equal(t, line, we.Line)
	}
	write(lines[0] + lines[2])
	broken(2)
	var e seal.Entry
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &e))
	e.Seq = 7
	changed, err := json.Marshal(e)
	require.NoError(t, err)
	write(lines[0] + string(changed) + "\n" + lines[2])
	broken(3)
	write(lines[0] + "not json\n" + lines[1])
	broken(2)

	// Torn: the half line is left out, then cut off.
	write(lines[0] + lines[1] + lines[2][:20])
	found, err := sl.Witness.Read()
	require.NoError(t, err)
	require.Len(t, found, 2)
	_, err = sl.Seal(ctx, s, thread.Head{Thread: "t", Seq: 3, Hash: facts.Hash{3}})
	require.NoError(t, err)
	found, err = sl.Witness.Read()
	require.NoError(t, err)
	require.Len(t, found, 3)
}

// Sealers appending at once (each with its own file handle, as processes
// do) keep one unbroken chain.
func TestWitnessConcurrent(t *testing.T) {
	s := store(t, 1)
	dir := t.TempDir()
	k, _, err := seal.OpenKey(filepath.Join(dir, seal.KeyFile))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			sl := &seal.Sealer{Key: k, Witness: &seal.Witness{Path: filepath.Join(dir, seal.WitnessFile)}, Store: "s"}
			_, err := sl.Seal(ctx, s, thread.Head{Thread: "t", Seq: uint64(i + 1), Hash: facts.Hash{byte(i)}})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	found, err := (&seal.Witness{Path: filepath.Join(dir, seal.WitnessFile)}).Read()
	require.NoError(t, err)
	require.Len(t, found, 16)
	for _, f := range found {
		require.True(t, f.Signed())
	}
}

// The anchor is given each entry once it is written.
func TestAnchor(t *testing.T) {
	s := store(t, 1)
	sl := sealer(t, t.TempDir())
	var got []seal.Entry
	sl.Anchor = func(_ context.Context, e seal.Entry) error { got = append(got, e); return nil }
	head, err := s.Head(ctx, "t")
	require.NoError(t, err)
	e, err := sl.Seal(ctx, s, head)
	require.NoError(t, err)
	require.Equal(t, []seal.Entry{e}, got)
}

// A last line longer than the few KiB read first is read whole (up to
// the bound of a line); one past the bound is refused, not half read.
func TestWitnessLongLastLine(t *testing.T) {
	s := store(t, 1)
	sl := sealer(t, t.TempDir())
	head, err := s.Head(ctx, "t")
	require.NoError(t, err)
	e, err := sl.Seal(ctx, s, head)
	require.NoError(t, err)
	b, err := os.ReadFile(sl.Witness.Path)
	require.NoError(t, err)

	// The last entry's store name makes its line 10 KiB long.
	long := *sl
	long.Store = strings.Repeat("s", 10<<10)
	_, err = long.Seal(ctx, s, head)
	require.NoError(t, err)
	next, err := sl.Seal(ctx, s, thread.Head{Thread: "t", Seq: 1, Hash: facts.Hash{9}})
	require.NoError(t, err)
	found, err := sl.Witness.Read()
	require.NoError(t, err)
	require.Len(t, found, 3)
	require.Equal(t, next.Prev, found[2].Prev)
	require.Equal(t, e, found[0].Entry)

	require.NoError(t, os.WriteFile(sl.Witness.Path, append(b, strings.Repeat("x", 70<<10)+"\n"...), 0o600))
	_, err = sl.Seal(ctx, s, head)
	require.ErrorIs(t, err, seal.ErrWitnessBroken)
}

// CheckHead refuses a log behind its own seal (the store lost facts it had
// kept: rev-store14 saw a damaged write-ahead log reopen at seq 13 of a
// thread sealed at 17, and resume run its command again) or holding
// another fact where it was sealed; a log at or past its last seal, a
// thread of the same id in another store, or another's seal, pass.
func TestCheckHead(t *testing.T) {
	s := store(t, 5)
	dir := t.TempDir()
	sl := sealer(t, dir)
	head, err := s.Head(ctx, "t")
	require.NoError(t, err)
	require.NoError(t, sl.CheckHead(ctx, s, head), "no seal yet")
	_, err = sl.Seal(ctx, s, head)
	require.NoError(t, err)
	require.NoError(t, sl.CheckHead(ctx, s, head))

	// The log as the store gives it after losing its last two facts.
	lost := thread.Head{Thread: "t", Seq: 3}
	err = sl.CheckHead(ctx, s, lost)
	require.ErrorIs(t, err, seal.ErrSealedAhead)
	require.ErrorContains(t, err, "sealed at seq 5")
	require.ErrorContains(t, err, "its log ends at seq 3")

	// Another fact where the seal is.
	err = sl.CheckHead(ctx, changedAt{s, 5}, head)
	require.ErrorIs(t, err, seal.ErrSealedAhead)
	require.ErrorContains(t, err, "holds another fact there")

	// Past the seal: fine, so long as the fact sealed is there.
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/z", facts.UserMessage{Text: "more"})
	require.NoError(t, err)
	head, err = s.Append(ctx, "t", 5, d)
	require.NoError(t, err)
	require.NoError(t, sl.CheckHead(ctx, s, head))

	// A thread of the same id in another store (another first fact),
	// another store's seal, another person's: not this check's.
	other := store(t, 3)
	oh, err := other.Head(ctx, "t")
	require.NoError(t, err)
	require.NoError(t, sl.CheckHead(ctx, other, oh))
	elsewhere := &seal.Sealer{Key: sl.Key, Witness: sl.Witness, Store: "elsewhere"}
	require.NoError(t, elsewhere.CheckHead(ctx, s, lost))
	k2, _, err := seal.OpenKey(filepath.Join(t.TempDir(), seal.KeyFile))
	require.NoError(t, err)
	someone := &seal.Sealer{Key: k2, Witness: sl.Witness, Store: "s"}
	require.NoError(t, someone.CheckHead(ctx, s, lost))
}

// changedAt is a store whose reads give fact seq of any thread with
// another payload.
type changedAt struct {
	thread.Store
	seq uint64
}

func (s changedAt) Read(ctx context.Context, id string, from uint64) iter.Seq2[facts.Fact, error] {
	inner := s.Store.Read(ctx, id, from)
	return func(yield func(facts.Fact, error) bool) {
		for f, err := range inner {
			if err == nil && f.Seq == s.seq {
				f.Data = append(bytes.Clone(f.Data), 0xc0)
			}
			if !yield(f, err) {
				return
			}
		}
	}
}
