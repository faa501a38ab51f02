package tell_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/tell"
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
	got := tell.PersonError(fmt.Errorf("undo: %w", ue))
	lines := strings.Split(got, "\n")
	require.Equal(t, []string{
		"undo: undo t2 refused; nothing was changed:",
		"  cache.toml: changed since the thread last touched it at seq 12",
		`  evil\nharness: undo t2 done\x1b[2K.txt: changed`,
	}, lines)
	require.Equal(t, `plain\nerror`, tell.PersonError(fmt.Errorf("plain\nerror")), "any other error stays one line")
}

// A failure's document has stable keys: usage, interrupted (an exit from
// 128) or error, and the message escaped.
func TestErrorDocOf(t *testing.T) {
	require.Equal(t, tell.ErrorDoc{Exit: 2, Error: struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}{"usage", `bad\x1b[2J`}}, tell.ErrorDocOf(2, true, fmt.Errorf("bad\x1b[2J")))
	require.Equal(t, "interrupted", tell.ErrorDocOf(130, false, nil).Error.Kind)
	require.Equal(t, "exit 130", tell.ErrorDocOf(130, false, nil).Error.Message)
	require.Equal(t, "error", tell.ErrorDocOf(1, false, fmt.Errorf("x")).Error.Kind)
}
