package seal_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/seal"
)

// A verdict and a summary are one flat document each, as replay --verify
// and seal print them.
func TestVerdictAndSummaryJSON(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	v := seal.Verdict{Found: seal.Found{Entry: seal.Entry{Thread: "t", Seq: 7, At: at, Key: "ed25519:abc"}, Witness: "/w.jsonl", Line: 3}, Status: seal.StatusHolds}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, map[string]any{"seq": float64(7), "hash": got["hash"], "at": "2026-03-01T12:00:00Z", "key": "ed25519:abc",
		"witness": "/w.jsonl", "line": float64(3), "verdict": string(seal.StatusHolds)}, got)

	b, err = json.Marshal(seal.SummaryOf(seal.Report{Thread: "t"}, errors.New("broken")))
	require.NoError(t, err)
	require.JSONEq(t, `{"sealed": false, "ok": false, "error": "broken", "seals": []}`, string(b))
	b, err = json.Marshal(seal.SummaryOf(seal.Report{Thread: "t", Seals: []seal.Verdict{v}, Elsewhere: 2}, nil))
	require.NoError(t, err)
	require.Contains(t, string(b), `"ok":true`)
	require.Contains(t, string(b), `"elsewhere":2`)
	require.Contains(t, string(b), `"verdict":"holds"`)
}
