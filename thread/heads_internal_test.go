package thread

import (
	"fmt"
	"hash/maphash"
	"testing"

	"github.com/stretchr/testify/require"
)

// A cause filter never misses a cause it holds, and says "maybe" to few
// it does not.
func TestCauseFilter(t *testing.T) {
	f := newCauseFilter(5000, maphash.MakeSeed())
	for i := range 5000 {
		f.add(fmt.Sprintf("tool/execute/%d-call_%d", i, i%7))
	}
	require.True(t, f.full())
	for i := range 5000 {
		require.True(t, f.mayHold(fmt.Sprintf("tool/execute/%d-call_%d", i, i%7)), i)
	}
	maybe := 0
	for i := range 100_000 {
		if f.mayHold(fmt.Sprintf("infer/turn/%d", i)) {
			maybe++
		}
	}
	// 16 bits and 4 probes a cause: about 0.24% when full.
	require.Less(t, maybe, 1000, "false positives in 100,000")
}
