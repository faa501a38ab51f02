package present_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
)

func TestElapsedTokenCountCut(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{15 * time.Millisecond, "15ms"}, {400 * time.Millisecond, "0.4s"}, {12300 * time.Millisecond, "12.3s"}, {125 * time.Second, "2m05s"}} {
		if got := present.Elapsed(c.d); got != c.want {
			t.Errorf("Elapsed(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{980, "980"}, {9999, "9999"}, {12_345, "12.3k"}, {1_234_567, "1.2M"}} {
		if got := present.TokenCount(c.n); got != c.want {
			t.Errorf("TokenCount(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"short", 10, "short"}, {"exactly", 7, "exactly"}, {"héllo wörld", 6, "héllo…"}, {"ab", 0, "…"}} {
		if got := present.Cut(c.s, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestCommandSummary(t *testing.T) {
	at := func(d time.Duration) string {
		return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(d).Format(time.RFC3339Nano)
	}
	r := facts.Report{
		Status: facts.StatusFailed, ExitCode: 2, Transcript: "$ go test",
		Stdout: "one\ntwo\nthree\n", Stderr: "bad\x1b[31m\r\n",
		StartedAt: at(0), EndedAt: at(1200 * time.Millisecond),
	}
	want := []string{"… 1 line above", "│ two", "│ three", `stderr │ bad\x1b[31m`, "exit 2 after 1.2s"}
	if got := present.CommandSummary(r, 2); !slices.Equal(got, want) {
		t.Errorf("CommandSummary = %q, want %q", got, want)
	}
	if got := present.CommandSummary(facts.Report{Status: facts.StatusSucceeded, Transcript: "wrote a.go"}, 2); got != nil {
		t.Errorf("a report of no command: %q, want none", got)
	}
	for _, c := range []struct {
		r    facts.Report
		want string
	}{
		{facts.Report{Status: facts.StatusSucceeded}, "exit 0"},
		{facts.Report{Status: facts.StatusFailed, Error: "no\nsuch"}, `no\nsuch`},
		{facts.Report{Status: facts.StatusFailed, StartedAt: at(0), EndedAt: "later"}, "ended"},
	} {
		if got := present.ExitLine(c.r); got != c.want {
			t.Errorf("ExitLine(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}
