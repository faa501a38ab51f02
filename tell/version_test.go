package tell

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersionFromBuildSettings(t *testing.T) {
	v := Version{Version: "v1.2.3", Commit: "unknown", Go: "go1.26"}
	v.settings([]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-03T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"}, {Key: "GOOS", Value: "linux"}})
	require.Equal(t, "harness v1.2.3 (commit abc123, 2026-12-03T10:00:00Z, modified; go1.26)", v.Line())

	bare := Version{Version: "dev", Commit: "unknown", Go: "go1.26"}
	require.Equal(t, "harness dev (commit unknown; go1.26)", bare.Line())

	text, err := v.Text("text")
	require.NoError(t, err)
	require.Equal(t, v.Line()+"\n", text)

	for _, out := range []string{"json", "jsonl"} {
		doc, err := v.Text(out)
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(doc, "}\n"), doc)
		require.Equal(t, out == "json", strings.Count(doc, "\n") > 1, "json is indented, jsonl one line: %q", doc)
		var back map[string]any
		require.NoError(t, json.Unmarshal([]byte(doc), &back))
		require.Equal(t, map[string]any{"version": "v1.2.3", "commit": "abc123", "time": "2026-12-03T10:00:00Z", "modified": true, "go": "go1.26"}, back)
	}
}

func TestVersionOfNamesTheCommitGiven(t *testing.T) {
	// A test binary records no vcs settings: the commit given stands.
	v := VersionOf("dev", "")
	require.Equal(t, "dev", v.Version)
	require.NotEmpty(t, v.Commit)
	require.True(t, strings.HasPrefix(v.Go, "go"), v.Go)
	if v.Commit == "unknown" {
		require.Equal(t, "feed", VersionOf("dev", "feed").Commit)
	}
}

// A build from a checkout (a test binary's, here) has no module version:
// it is "dev".
func TestModuleVersion(t *testing.T) {
	require.Equal(t, "dev", ModuleVersion())
}
