package drive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An action's output is told as it comes up to MaxLiveOutput, then once
// that the rest is not; another action's is told apart (rev-trust14: a
// command printing 400 MB put all of it into -o stream-json).
func TestLiveOutputBounded(t *testing.T) {
	var o outputSent
	chunk := []byte(strings.Repeat("x", 64<<10))
	var told int
	notes := 0
	for range 100 {
		b, note := o.take("t1", "1-a", chunk)
		told += len(b)
		if note != "" {
			notes++
			require.Contains(t, note, "more than 1048576 bytes")
		}
	}
	require.Equal(t, MaxLiveOutput, told)
	require.Equal(t, 1, notes)
	b, note := o.take("t1", "1-b", []byte("hi"))
	require.Equal(t, "hi", string(b))
	require.Empty(t, note)
}
