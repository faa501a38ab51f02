package tell_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// AskTrust trusts only what the person says yes to, by the content
// listed; a file that widens nothing, or is trusted already, is not
// asked; an end of input is a no. The path the file names is escaped.
func TestAskTrust(t *testing.T) {
	widens := func(path, digest string) stock.SettingsSource {
		return stock.SettingsSource{Scope: stock.ScopeProject, Path: path, Digest: digest, Exists: true,
			Widens: []string{"approve"}, Values: map[string]json.RawMessage{"approve": json.RawMessage(`"all"`)}}
	}
	files := []stock.SettingsSource{
		widens("/w/a\x1b[2J.json", "aaaa"),
		{Scope: stock.ScopeProject, Path: "/w/narrow.json", Digest: "bbbb", Exists: true},
		widens("/w/b.json", "cccc"),
		widens("/w/c.json", "dddd"),
		{Scope: stock.ScopeProject, Path: "/w/old.json", Digest: "eeee", Exists: true, Trusted: true, Widens: []string{"allow"}},
	}
	for _, c := range []struct {
		name          string
		in            string
		yes, asking   bool
		trusted       []string
		pending, asks int
	}{
		{"asked: y, no, yes", "y no YES", false, true, []string{"aaaa", "dddd"}, 1, 3},
		{"asked: input ends", "n", false, true, nil, 3, 3},
		{"--yes", "", true, false, []string{"aaaa", "cccc", "dddd"}, 0, 0},
		{"no terminal", "y y y", false, false, nil, 3, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := new(harnesstest.LockedBuffer)
			in, keys := io.Pipe()
			go func() { // each answer typed once its question is put
				for i, line := range strings.Fields(c.in) {
					for strings.Count(out.String(), "Trust this content of") <= i {
						time.Sleep(5 * time.Millisecond)
					}
					time.Sleep(20 * time.Millisecond)
					if _, err := io.WriteString(keys, line+"\n"); err != nil {
						return
					}
				}
				for strings.Count(out.String(), "Trust this content of") < min(len(strings.Fields(c.in))+1, c.asks) {
					time.Sleep(5 * time.Millisecond)
				}
				keys.Close() // then the input ends
			}()
			t.Cleanup(func() { keys.Close() })
			a := &tell.Asker{Teller: tell.Teller{W: out}, In: in}
			var trusted []string
			pending, err := a.AskTrust(t.Context(), files, c.yes, c.asking, func(s stock.SettingsSource) error {
				trusted = append(trusted, s.Digest)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, c.trusted, trusted)
			require.Equal(t, c.pending, pending)
			require.Equal(t, c.asks, strings.Count(out.String(), "Trust this content of"))
			require.NotContains(t, out.String(), "\x1b")
			require.Equal(t, len(c.trusted), strings.Count(out.String(), "  trusted: sha256"))
		})
	}
}
