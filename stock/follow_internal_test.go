package stock

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// Reading a store in a directory leaves its stamp as it was: Follow and
// Peeker open it again only when a writer wrote, not at every look.
func TestDBStampIsStableUnderReads(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	place, err := Locate(root, "")
	require.NoError(t, err)
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(root, "config")
		}
		return ""
	}
	s, err := OpenSession(ctx, place, SessionOptions{Getenv: getenv, Create: true})
	require.NoError(t, err)
	_, _, err = s.Submit(ctx, "t1", "Nobody runs this", nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	place, err = Locate(root, "")
	require.NoError(t, err)
	db := place.DB()
	before := dbStamp(db)

	r, err := OpenSession(ctx, place, SessionOptions{Getenv: getenv, ReadOnly: true, Lenient: true})
	require.NoError(t, err)
	for _, err := range r.Store.Read(ctx, "t1", 1) {
		require.NoError(t, err)
	}
	rt, _, err := r.Runtime()
	require.NoError(t, err)
	_, err = rt.Thread(r.Stock.Actor, "t1").Reading(ctx)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.Equal(t, before, dbStamp(db), "reads change nothing the stamp sees")

	w, err := OpenSession(ctx, place, SessionOptions{Getenv: getenv})
	require.NoError(t, err)
	d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "more"})
	require.NoError(t, err)
	rt, _, err = w.Runtime()
	require.NoError(t, err)
	_, err = rt.Thread(w.Stock.Actor, "t1").Post(ctx, d, "more")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NotEqual(t, before, dbStamp(db), "a write does")
}
