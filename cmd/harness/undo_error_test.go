package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/rewind"
)

// TestUndoRefusalLines: an undo's refusal reaches a person as lines — the
// refusal, then each path indented — with real line breaks, whatever
// wraps it; a path's own line feed or escape sequence is escaped, and
// cannot start a line of its own.
func TestUndoRefusalLines(t *testing.T) {
	ue := &rewind.UndoError{Thread: "t2", Conflicts: []rewind.UndoConflict{
		{Path: "cache.toml", Reason: "changed since the thread last touched it at seq 12"},
		{Path: "evil\nharness: undo t2 done\x1b[2K.txt", Reason: "changed"},
	}}
	got := personError(fmt.Errorf("undo: %w", ue))
	lines := strings.Split(got, "\n")
	require.Equal(t, []string{
		"undo: undo t2 refused; nothing was changed:",
		"  cache.toml: changed since the thread last touched it at seq 12",
		`  evil\nharness: undo t2 done\x1b[2K.txt: changed`,
	}, lines)
	require.Equal(t, `plain\nerror`, personError(fmt.Errorf("plain\nerror")), "any other error stays one line")
}
