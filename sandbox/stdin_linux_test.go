package sandbox_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// A command given a Stdin reads it: a long-running process spoken to over
// its stdin and stdout (an MCP server) answers line by line, in the
// sandbox, and ends when its stdin closes. Without a Stdin it reads
// nothing.
func TestStdin(t *testing.T) {
	spec := defaultSpec(t)
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	c := &sandbox.Cmd{Spec: spec, Line: `while read -r line; do echo "got $line"; done`, Stdin: inR, Stdout: outW}
	require.NoError(t, c.Start(context.Background()))
	inR.Close()
	outW.Close()
	lines := bufio.NewReader(outR)
	for _, word := range []string{"one", "two"} {
		_, err := io.WriteString(inW, word+"\n")
		require.NoError(t, err)
		got, err := lines.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "got "+word+"\n", got)
	}
	require.NoError(t, inW.Close())
	e, err := c.Wait()
	require.NoError(t, err)
	require.Equal(t, 0, e.Code)
	outR.Close()

	out, e := run(t, spec, `cat; echo "end $?"`)
	require.Equal(t, "end 0\n", out, "without a Stdin the command reads /dev/null")
	require.Equal(t, 0, e.Code)
}
