package tell

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// TrustDoc is a file trust applies to, as the command line's JSON lists
// it: where it is, its digest, whether its content is trusted, and the
// keys it widens with their values as the file writes them.
type TrustDoc struct {
	Scope   stock.Scope                `json:"scope"`
	Path    string                     `json:"path"`
	Digest  string                     `json:"sha256"`
	Trusted bool                       `json:"trusted"`
	Widens  []string                   `json:"widens"`
	Values  map[string]json.RawMessage `json:"values,omitempty"`
	Error   string                     `json:"error,omitempty"`
}

// TrustDocs are the files' documents, in order; never nil.
func TrustDocs(files []stock.SettingsSource) []TrustDoc {
	out := []TrustDoc{}
	for _, s := range files {
		f := TrustDoc{Scope: s.Scope, Path: s.Path, Digest: s.Digest, Trusted: s.Trusted, Widens: s.Widens, Values: map[string]json.RawMessage{}}
		if f.Widens == nil {
			f.Widens = []string{}
		}
		for _, k := range s.Widens {
			f.Values[k] = s.Values[k]
		}
		if s.Err != nil {
			f.Error = s.Err.Error()
		}
		out = append(out, f)
	}
	return out
}

// Trustable reports whether the person may be asked to trust s: it
// widens something, is not trusted yet, and could be read (a key this
// program does not know is no bar).
func Trustable(s stock.SettingsSource) bool {
	return !s.Trusted && len(s.Widens) > 0 && (s.Err == nil || errors.Is(s.Err, stock.ErrUnknownSetting))
}

// TrustFile tells one file for trust: where it is, its digest, whether
// it is trusted, and what it widens with the values as written (escaped:
// the file is data).
func TrustFile(w io.Writer, s stock.SettingsSource) {
	state := "not trusted"
	switch {
	case s.Err != nil && !errors.Is(s.Err, stock.ErrUnknownSetting):
		state = "error: " + errorLine(s.Err)
	case len(s.Widens) == 0:
		state = "widens nothing: applies as it is"
	case s.Trusted:
		state = "trusted"
	}
	fmt.Fprintf(w, "%s %s (sha256 %s): %s\n", s.Scope, present.EscapeLine(s.Path), ShortDigest(s.Digest), state)
	if len(s.Widens) > 0 {
		fmt.Fprintf(w, "  widens: %s\n", strings.Join(s.Widens, ", "))
		for _, k := range s.Widens {
			fmt.Fprintf(w, "    %-15s %s\n", k, present.EscapeLine(compactJSON(s.Values[k])))
		}
	}
}

// compactJSON is raw on one line.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Revoked says what forgetting the trust in path did: had says whether it
// was trusted. An empty path is every file of the workspace root.
func Revoked(w io.Writer, root, path string, had bool) {
	switch {
	case path == "" && had:
		fmt.Fprintf(w, "forgot the trust in the settings files of %s\n", present.EscapeLine(root))
	case path == "":
		fmt.Fprintf(w, "no settings file of %s was trusted\n", present.EscapeLine(root))
	case had:
		fmt.Fprintf(w, "forgot the trust in %s\n", present.EscapeLine(path))
	default:
		fmt.Fprintf(w, "%s was not trusted\n", present.EscapeLine(path))
	}
}
