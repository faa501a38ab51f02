package present_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/present"
)

// A streamed reply is escaped however it is cut into pieces: an escape
// sequence split across writes never reaches the terminal, and a UTF-8
// character split across writes arrives whole.
func TestWriterEscapesAStream(t *testing.T) {
	text := "Approve? \x1b[8mhidden\x1b[0m é ✓ line\nnext\r\u202e"
	want := present.EscapeText(text)
	for size := 1; size <= len(text); size++ {
		var b strings.Builder
		w := present.NewWriter(&b)
		for i := 0; i < len(text); i += size {
			n, err := w.Write([]byte(text[i:min(i+size, len(text))]))
			require.NoError(t, err)
			require.Equal(t, min(size, len(text)-i), n)
		}
		require.NoError(t, w.Flush())
		require.Equal(t, want, b.String(), "pieces of %d bytes", size)
		require.NotContains(t, b.String(), "\x1b")
		require.NotContains(t, b.String(), "\r")
	}
	// An incomplete character at the end is flushed escaped.
	var b strings.Builder
	w := present.NewWriter(&b)
	_, err := w.Write([]byte("ok \xe2\x9c"))
	require.NoError(t, err)
	require.Equal(t, "ok ", b.String())
	require.NoError(t, w.Flush())
	require.Equal(t, `ok \xe2\x9c`, b.String())
}
