package action_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
)

// A WorkspaceOption returns no error (one option style: see docs/api.md);
// a bad value given to one is NewWorkspace's error, matching
// ErrBadOption and naming the option, and every bad option is named.
func TestWorkspaceOptionRefusedByNewWorkspace(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		opt  action.WorkspaceOption
	}{
		{"WithBlobs", action.WithBlobs(nil, 0)},
		{"WithStorePaths", action.WithStorePaths("")},
		{"WithOwnFiles", action.WithOwnFiles(nil)},
		{"WithSkipPaths", action.WithSkipPaths("../out")},
		{"WithSkipPaths", action.WithSkipPaths("/abs")},
		{"WithSkipFunc", action.WithSkipFunc(nil)},
		{"WithRacyWindow", action.WithRacyWindow(-1)},
	} {
		w, err := action.NewWorkspace(root, tc.opt)
		require.ErrorIs(t, err, action.ErrBadOption, tc.name)
		require.ErrorContains(t, err, tc.name)
		require.Nil(t, w)
	}
	_, err := action.NewWorkspace(root, action.WithRacyWindow(-1), action.WithSkipFunc(nil))
	require.ErrorContains(t, err, "WithRacyWindow")
	require.ErrorContains(t, err, "WithSkipFunc")

	f, err := os.CreateTemp(root, "own")
	require.NoError(t, err)
	defer f.Close()
	w, err := action.NewWorkspace(root, action.WithSkipPaths("a/b"), action.WithOwnFiles(f), action.WithRacyWindow(0), action.WithStorePaths(root+"/.harness"))
	require.NoError(t, err)
	require.NotNil(t, w)
}
