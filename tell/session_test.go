package tell_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// scriptedSession opens a session on a fresh workspace, with a user
// config dir of its own (getenv), and the model that answers from script
// (JSON Lines, as stock.LoadModel's "scripted:" reads).
func scriptedSession(t *testing.T, script string) (*stock.Session, model.Model, func(string) string) {
	t.Helper()
	root := t.TempDir()
	path := filepath.Join(root, "s.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	cfg := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	place, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.OpenSession(t.Context(), place, stock.SessionOptions{Getenv: getenv, Create: true, Drive: true})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	m, err := stock.LoadModel("scripted:" + path)
	require.NoError(t, err)
	return s, m, getenv
}
