package tell_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// A file to trust is shown as it writes its widening keys: compacted,
// escaped, never trusted by being listed.
func TestTrustFileShowsWhatItWidens(t *testing.T) {
	s := stock.SettingsSource{Scope: stock.ScopeProject, Path: "/w/.harness/project.json", Digest: "0123456789abcdef0123",
		Widens: []string{"allow", "serve"}, Values: map[string]json.RawMessage{
			"allow": json.RawMessage(`[ "run_command:*" ]`), "serve": json.RawMessage(`{"addr": "0.0.0.0:80\u001b[2J"}`)}}
	var b bytes.Buffer
	tell.TrustFile(&b, s)
	require.Equal(t, "project /w/.harness/project.json (sha256 0123456789ab): not trusted\n"+
		"  widens: allow, serve\n"+
		"    allow           [\"run_command:*\"]\n"+
		`    serve           {"addr":"0.0.0.0:80\u001b[2J"}`+"\n", b.String())
	require.True(t, tell.Trustable(s))

	docs := tell.TrustDocs([]stock.SettingsSource{s, {Scope: stock.ScopeLocal, Path: "/w/.harness/config.json", Err: fmt.Errorf("x: %w", stock.ErrSettingsFile)}})
	require.Equal(t, []string{}, docs[1].Widens)
	require.Contains(t, docs[1].Error, "not a settings file")
	require.JSONEq(t, `["run_command:*"]`, string(docs[0].Values["allow"]))

	s.Trusted = true
	require.False(t, tell.Trustable(s))
	s.Trusted, s.Err = false, fmt.Errorf("x: %w", stock.ErrUnknownSetting)
	require.True(t, tell.Trustable(s), "an unknown key is no bar to trust")
	s.Err = fmt.Errorf("x: %w", stock.ErrSettingsFile)
	require.False(t, tell.Trustable(s))

	b.Reset()
	tell.Revoked(&b, "/w", "", true)
	tell.Revoked(&b, "/w", "/w/.harness/project.json", false)
	require.Equal(t, "forgot the trust in the settings files of /w\n/w/.harness/project.json was not trusted\n", b.String())
}
