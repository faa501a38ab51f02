package present_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/present"
)

func TestPlural(t *testing.T) {
	require.Equal(t, "1 model turn", present.Plural(1, "model turn", "model turns"))
	require.Equal(t, "0 model turns", present.Plural(0, "model turn", "model turns"))
	require.Equal(t, "2 facts", present.Plural(uint64(2), "fact", "facts"))
	require.Equal(t, "1 fact", present.Plural(uint64(1), "fact", "facts"))
	require.Equal(t, "18446744073709551615 bytes", present.Plural(uint64(1<<64-1), "byte", "bytes"))
	require.Equal(t, "-1 turns", present.Plural(int64(-1), "turn", "turns"))
	require.Equal(t, "-9223372036854775808 tokens", present.Plural(int64(-1<<63), "token", "tokens"))
	require.Equal(t, "1 seal", present.Plural(int32(1), "seal", "seals"))
}
