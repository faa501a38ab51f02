package rerun_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/rerun"
)

// The same JSON value spelled otherwise is the same call; a key named
// twice, another number, another string are not.
func TestCallDigest(t *testing.T) {
	same := func(a, b string) bool { return rerun.CallDigest("t", a) == rerun.CallDigest("t", b) }
	require.True(t, same(`{"a":1,"b":"x"}`, `{ "b": "x", "a": 1 }`))
	require.True(t, same(`{"s":"\u00e9"}`, `{"s":"é"}`))
	require.True(t, same(`{"s":"<a>"}`, `{"s":"\u003ca\u003e"}`))
	require.False(t, same(`{"a":1}`, `{"a":1.0}`), "numbers compare as written")
	require.False(t, same(`{"n":12345678901234567890}`, `{"n":12345678901234567891}`), "no float rounding")
	require.False(t, same(`{"path":"x","path":"notes.txt"}`, `{"path":"notes.txt"}`), "a key named twice is refused, never the last value")
	require.False(t, same(`{"a":1}`, `{"a":1} {"b":2}`))
	require.False(t, rerun.CallDigest("read_file", `{}`) == rerun.CallDigest("write_file", `{}`))
}

func TestArgsDiff(t *testing.T) {
	require.Equal(t, []string{`content: "a" → "b"`, `mode: (none) → 493`, `old: true → (none)`},
		rerun.ArgsDiff(`{"path":"p","content":"a","old":true}`, `{"path":"p","content":"b","mode":493}`))
	require.Equal(t, []string{`[1] → [2]`}, rerun.ArgsDiff(`[1]`, `[2]`))
	long := `{"c":"` + string(make([]byte, 200)) + `"}`
	for _, d := range rerun.ArgsDiff(long, `{"c":"x"}`) {
		require.Less(t, len(d), 200, "a diff is clipped")
	}
}
