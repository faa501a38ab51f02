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

// addIfNew holds every cause it was given, says "new" again of none of
// them, and says "new" of most causes it was not given.
func TestCauseFilterAddIfNew(t *testing.T) {
	f := newCauseFilter(2000, maphash.MakeSeed())
	added := 0
	for i := range 2000 {
		c := fmt.Sprintf("step/%d", i)
		if f.addIfNew(c) {
			added++
		}
		require.True(t, f.mayHold(c), c)
		require.False(t, f.addIfNew(c), c)
	}
	require.Greater(t, added, 1990, "causes taken for ones already held")
	require.Equal(t, added, f.n)
}
