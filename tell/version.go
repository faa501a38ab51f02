package tell

import (
	"cmp"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is what a program says of itself (--version): as a line, or as
// a JSON document with these keys.
type Version struct {
	Version string `json:"version"`
	// Commit is the commit the program was built from ("unknown" when the
	// build records none), Time its time and Modified whether the
	// checkout had changes.
	Commit   string `json:"commit"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// ModuleVersion is the program's version: the module's, as the build
// records it, or "dev" for a build from a checkout.
func ModuleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// VersionOf reads what the build recorded of itself: version is the
// program's version, commit the commit to name when the build records
// none.
func VersionOf(version, commit string) Version {
	v := Version{Version: version, Commit: cmp.Or(commit, "unknown"), Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Go = bi.GoVersion
		v.settings(bi.Settings)
	}
	return v
}

// settings takes the commit, its time and whether the checkout was
// modified from a build's settings.
func (v *Version) settings(ss []debug.BuildSetting) {
	for _, s := range ss {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
}

// Line is the version as one line: "harness v1.2.3 (commit abc…, TIME;
// go1.26)".
func (v Version) Line() string {
	line := fmt.Sprintf("harness %s (commit %s", v.Version, v.Commit)
	if v.Time != "" {
		line += ", " + v.Time
	}
	if v.Modified {
		line += ", modified"
	}
	return line + "; " + v.Go + ")"
}

// Text is the version in the output format out: the line (text, or any
// other), an indented document (json) or one line of JSON (jsonl); each
// ends in a newline.
func (v Version) Text(out string) (string, error) {
	switch out {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		return string(b) + "\n", err
	case "jsonl":
		b, err := json.Marshal(v)
		return string(b) + "\n", err
	}
	return v.Line() + "\n", nil
}
