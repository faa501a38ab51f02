package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// testScan checks thread.Scan on the store, natively if it is a
// thread.Scanner and through Read if not: the facts Read yields from any
// seq, the payload lent (copied here, as a caller that keeps it must);
// fn's error returned as it is, stopping the scan; the head as it was
// when scanning began; nothing for an unknown thread; the errors of a bad
// id and a done context.
func testScan(t *testing.T, s thread.Store) {
	ctx := context.Background()
	const n = 9
	for i := range n {
		_, err := s.Append(ctx, "t1", uint64(i), msg(t, fmt.Sprintf("ingress/%d", i), fmt.Sprint("payload ", i)))
		require.NoError(t, err)
	}
	all := readAll(t, s, "t1", 1)
	scanAll := func(id string, from uint64) []facts.Fact {
		var out []facts.Fact
		require.NoError(t, thread.Scan(ctx, s, id, from, func(f facts.Fact) error {
			f.Data = bytes.Clone(f.Data)
			out = append(out, f)
			return nil
		}))
		return out
	}
	for from := uint64(0); from <= n+2; from++ {
		got := scanAll("t1", from)
		if first := max(from, 1); first <= n {
			require.Equal(t, all[first-1:], got, "from %d", from)
		} else {
			require.Empty(t, got, "from %d", from)
		}
	}
	require.Empty(t, scanAll("nothing-here", 1), "an unknown thread has no facts")

	stop := errors.New("enough")
	var seqs []uint64
	err := thread.Scan(ctx, s, "t1", 1, func(f facts.Fact) error {
		seqs = append(seqs, f.Seq)
		if f.Seq == 3 {
			return stop
		}
		return nil
	})
	require.Same(t, stop, err, "fn's error comes back as it is")
	require.Equal(t, []uint64{1, 2, 3}, seqs)

	seqs = nil
	require.NoError(t, thread.Scan(ctx, s, "t1", 1, func(f facts.Fact) error {
		seqs = append(seqs, f.Seq)
		if f.Seq == 1 {
			_, err := s.Append(ctx, "t1", n, msg(t, "ingress/late", "appended while scanning"))
			return err
		}
		return nil
	}))
	require.Len(t, seqs, n, "a scan ends at the head it started with")

	require.ErrorIs(t, thread.Scan(ctx, s, "bad id", 1, func(facts.Fact) error { return nil }), thread.ErrBadThreadID)
	done, cancel := context.WithCancel(ctx)
	cancel()
	calls := 0
	err = thread.Scan(done, s, "t1", 1, func(facts.Fact) error { calls++; return nil })
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, calls)
}
