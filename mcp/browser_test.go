package mcp_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/mcp"
)

// StartBrowser runs the person's browser command with the URL as one
// argument (no shell: a URL's ; and $ are text), and does not wait.
func TestStartBrowser(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	browser := filepath.Join(dir, "browser")
	require.NoError(t, os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+got+".tmp && mv "+got+".tmp "+got+"\n"), 0o755))
	u := "https://auth.example/authorize?a=1&b=$(touch " + filepath.Join(dir, "owned") + ");x"
	require.NoError(t, mcp.StartBrowser(" "+browser+" ", u, os.Stderr))
	require.Eventually(t, func() bool { _, err := os.Stat(got); return err == nil }, 10*time.Second, 10*time.Millisecond)
	b, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, u, string(b))
	require.NoFileExists(t, filepath.Join(dir, "owned"))

	require.NoError(t, mcp.StartBrowser("", u, os.Stderr), "no browser: nothing to start")
	require.Error(t, mcp.StartBrowser(filepath.Join(dir, "missing"), u, os.Stderr))
}
