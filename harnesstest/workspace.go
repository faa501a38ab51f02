package harnesstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/stretchr/testify/require"
)

// Workspace is a new directory of the test holding files: each name a
// slash-separated path inside it (its directories made), each value the
// file's content. It is removed when the test ends.
func Workspace(t T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.True(t, filepath.IsLocal(filepath.FromSlash(name)), "%q is not a path inside the workspace", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

// Tree is a new directory of the test holding n files of letters, each
// 500 to 3,500 bytes drawn from seed: named fileNNNNN.txt at the top for
// n up to 100, and spread over 10×10 directories (pkgA/subB/) past that,
// as a repository's sources are. The same n and seed give the same tree.
func Tree(t T, n int, seed uint64) string {
	t.Helper()
	root := t.TempDir()
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	buf := make([]byte, 3_500)
	for i := range n {
		rel := fmt.Sprintf("file%05d.txt", i)
		if n > 100 {
			rel = fmt.Sprintf("pkg%d/sub%d/file%05d.txt", i%10, (i/10)%10, i)
		}
		data := buf[:500+r.IntN(3_001)]
		for j := range data {
			data[j] = 'a' + byte(r.IntN(26))
		}
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	return root
}
