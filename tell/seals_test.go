package tell_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/tell"
)

func TestSealsSayWhatHolds(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	found := func(seq uint64, key string, st seal.Status) seal.Verdict {
		return seal.Verdict{Found: seal.Found{Entry: seal.Entry{Thread: "t1", Seq: seq, At: at, Key: seal.PublicKey(key)}, Witness: "/w\x1b.jsonl", Line: int(seq)}, Status: st}
	}
	r := seal.Report{Thread: "t1", Head: 9, Elsewhere: 1, Unread: []string{"/x: gone"},
		Seals: []seal.Verdict{found(3, "ed25519:ana", seal.StatusHolds), found(5, "ed25519:bob", seal.StatusUnknownKey), found(7, "ed25519:ana", seal.StatusHolds)}}
	var b bytes.Buffer
	require.True(t, tell.Seals(&b, r, nil, "KEY", brackets))
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, "[yellow:note:] the seal at seq 5 (")
	require.Contains(t, out, "is by ed25519:bob, a key not named (KEY): not checked\n")
	require.Contains(t, out, "[yellow:note:] /x: gone\n")
	require.Contains(t, out, "[dim:note:] 1 seal of a thread t1 in another store (another first fact) was not checked")
	require.Contains(t, out, "[green:sealed:] 2 of its seals hold; the latest at seq 7 of 9 (")

	b.Reset()
	require.True(t, tell.Seals(&b, seal.Report{Thread: "t1", Head: 2}, nil, "KEY", nil))
	require.Contains(t, b.String(), "unsealed: thread t1: no seal of its log")

	b.Reset()
	broken := &seal.BrokenError{Thread: "t1", Seq: 3, At: at, Key: "ed25519:ana", Witness: "/w.jsonl", Line: 3, Reason: "another\nfact"}
	require.False(t, tell.Seals(&b, r, fmt.Errorf("check: %w", broken), "KEY", nil))
	require.Contains(t, b.String(), "verification failed: thread t1: the seal at seq 3 (sealed ")
	require.Contains(t, b.String(), "/w.jsonl line 3): another fact\n")
	b.Reset()
	require.False(t, tell.Seals(&b, r, seal.ErrNoSealByKey, "KEY", nil))
	require.Contains(t, b.String(), "verification failed: "+seal.ErrNoSealByKey.Error())
}
