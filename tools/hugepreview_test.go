package tools_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/tools"
)

// readBytes is how many bytes this process has read through read(2) and
// its kin so far (rchar in /proc/self/io), or -1 where that is not told.
func readBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	return -1
}

// sparse makes a file of size bytes at root/name that holds no data.
func sparse(t *testing.T, root, name string, size int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(root, name))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
}

// A file over the observer's hash limit is known by its stat record
// alone: the preview of a write over it (or an edit of it) never reads
// it, and says its size, that its content was not read and that the
// write replaces it. The bytes this process reads while previewing are
// counted: a file the preview reads (the control, at the limit) counts,
// the one above it does not.
func TestPreviewNeverReadsAFileOverTheHashLimit(t *testing.T) {
	if readBytes(t) < 0 {
		t.Skip("this system does not count a process's reads (/proc/self/io)")
	}
	const limit = 4 << 20
	root := t.TempDir()
	sparse(t, root, "big.bin", 10<<30)
	sparse(t, root, "at.bin", limit)
	preview := tools.PreviewWithin(limit)
	write := func(path string) string {
		return preview(root, tools.WriteFile, js(t, map[string]string{"path": path, "content": "small\n"}))
	}

	// The control: a file at the limit is read (all of it, to hash it).
	was := readBytes(t)
	got := write("at.bin")
	require.GreaterOrEqual(t, readBytes(t)-was, int64(limit), "the file at the limit was read to hash it")
	require.Contains(t, got, fmt.Sprintf("before: %d bytes (1 line), sha256 ", limit))

	was = readBytes(t)
	got = write("big.bin")
	require.Less(t, readBytes(t)-was, int64(limit/4), "the preview read the file above the limit")
	require.Equal(t, fmt.Sprintf("--- a/big.bin\n+++ b/big.bin\n"+
		"(not diffed: big.bin is known by its size alone, its content was not read; the write replaces all of it)\n"+
		"  before: 10737418240 bytes, sha256 not computed (content not read: larger than %d bytes, the observer's hash limit)\n"+
		"  after:  6 bytes (1 line), sha256 %s\n", limit, sha("small\n")), got)

	was = readBytes(t)
	got = preview(root, tools.EditFile, js(t, map[string]string{"path": "big.bin", "old": "a", "new": "b"}))
	require.Less(t, readBytes(t)-was, int64(limit/4), "the edit's preview read the file above the limit")
	require.Contains(t, got, "(no preview: big.bin is 10737418240 bytes, sha256 not computed (content not read: larger than 4194304 bytes")
}

// Preview is PreviewWithin the observer's default limit: a 10 GB sparse
// file (the attack of a repository that ships one) is not read, and no
// more than the limit of anything is.
func TestPreviewOfASparseFileAboveTheDefaultLimit(t *testing.T) {
	if readBytes(t) < 0 {
		t.Skip("this system does not count a process's reads (/proc/self/io)")
	}
	root := t.TempDir()
	sparse(t, root, "big.bin", 10<<30)
	was := readBytes(t)
	got := tools.Preview(root, tools.WriteFile, js(t, map[string]string{"path": "big.bin", "content": "small\n"}))
	require.Less(t, readBytes(t)-was, int64(1<<20))
	require.Contains(t, got, fmt.Sprintf("its content was not read; the write replaces all of it)\n  before: 10737418240 bytes, sha256 not computed (content not read: larger than %d bytes, the observer's hash limit)", action.DefaultHashLimit))
}

// edit_file must read the file it edits: a 50 GB sparse file is refused
// from its size (Limits.FileBytes), by its declared check and by its run,
// without a byte of it read, and the file is left as it was.
func TestEditOfAHugeFileIsRefusedUnread(t *testing.T) {
	if readBytes(t) < 0 {
		t.Skip("this system does not count a process's reads (/proc/self/io)")
	}
	s, root := workspace(t, nil)
	sparse(t, root, "huge.bin", 50<<30)
	args := js(t, map[string]string{"path": "huge.bin", "old": "a", "new": "b"})
	tool, ok := s.Lookup(tools.EditFile)
	require.True(t, ok)

	was := readBytes(t)
	_, err := tool.Check([]byte(args))
	require.ErrorContains(t, err, "53687091200 bytes")
	rep := call(t, s, tools.EditFile, args)
	require.Less(t, readBytes(t)-was, int64(1<<20), "edit_file read the huge file")
	require.Equal(t, "failed", string(rep.Status))
	require.Contains(t, rep.Error, "53687091200 bytes")
	info, err := os.Stat(filepath.Join(root, "huge.bin"))
	require.NoError(t, err)
	require.Equal(t, int64(50<<30), info.Size())
}
