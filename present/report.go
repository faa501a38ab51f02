package present

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/facts"
)

// Elapsed says a duration briefly: 15ms, 0.4s, 12.3s, 2m05s.
func Elapsed(d time.Duration) string {
	if d < 100*time.Millisecond {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// Cut shortens an escaped line to n runes (n at least 1), its last one
// an ellipsis when it was cut.
func Cut(s string, n int) string {
	if n < 1 {
		n = 1
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// TokenCount says a number of tokens briefly: 980, 12.3k, 1.2M.
func TokenCount(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}

// USD is an amount of US dollars for people: "$1.23", or to four places
// under a cent ("$0.0042"), "$0" for nothing.
func USD(x float64) string {
	switch {
	case x == 0:
		return "$0"
	case x < 0.01:
		return fmt.Sprintf("$%.4f", x)
	}
	return fmt.Sprintf("$%.2f", x)
}

// CommandSummary is what a command did, in a few lines under its
// completion: the last tail lines of its stdout and of its stderr
// (escaped), then its exit code and time (ExitLine). It is empty for a
// report that ran no command.
func CommandSummary(r facts.Report, tail int) []string {
	if !strings.HasPrefix(r.Transcript, "$ ") {
		return nil
	}
	var out []string
	for _, s := range []struct{ name, text string }{{"", r.Stdout}, {"stderr ", r.Stderr}} {
		lines := strings.Split(strings.TrimRight(s.text, "\n"), "\n")
		if s.text == "" {
			continue
		}
		if len(lines) > tail {
			out = append(out, fmt.Sprintf("%s… %s above", s.name, Plural(len(lines)-tail, "line", "lines")))
			lines = lines[len(lines)-tail:]
		}
		for _, line := range lines {
			out = append(out, s.name+"│ "+EscapeLine(strings.TrimRight(line, "\r")))
		}
	}
	out = append(out, NetworkLines(r.Network)...)
	out = append(out, ExitLine(r))
	return out
}

// NetworkLines say each connection a command made through its
// allow-list's proxy, one a line (escaped): "network: CONNECT
// github.com:443 allowed, 512 bytes sent, 40960 received" or "network:
// GET evil.test:80 refused: evil.test:80 is not in the network
// allow-list". None for nil.
func NetworkLines(n *facts.Network) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, c := range n.Connections {
		l := fmt.Sprintf("network: %s %s:%d %s", c.Method, c.Host, c.Port, c.Verdict)
		if c.Verdict == facts.ConnectionAllowed {
			l += fmt.Sprintf(" via %s, %d bytes sent, %d received", c.Addr, c.Sent, c.Received)
		}
		if c.Reason != "" {
			l += ": " + c.Reason
		}
		out = append(out, EscapeLine(l))
	}
	if n.Dropped > 0 {
		out = append(out, "network: "+Plural(n.Dropped, "more connection", "more connections")+" not listed")
	}
	if len(out) == 0 {
		out = append(out, "network: no connection through the proxy")
	}
	return out
}

// Took is how long the adapter of a report ran (Elapsed), "" when it did
// not say.
func Took(r facts.Report) string {
	start, err := time.Parse(time.RFC3339Nano, r.StartedAt)
	if err != nil {
		return ""
	}
	end, err := time.Parse(time.RFC3339Nano, r.EndedAt)
	if err != nil {
		return ""
	}
	return Elapsed(end.Sub(start))
}

// ExitLine says how a command ended: "exit 0 after 1.2s".
func ExitLine(r facts.Report) string {
	took := Took(r)
	if took != "" {
		took = " after " + took
	}
	switch {
	case r.Status == facts.StatusSucceeded:
		return fmt.Sprintf("exit 0%s", took)
	case r.ExitCode != 0:
		return fmt.Sprintf("exit %d%s", r.ExitCode, took)
	case r.Error != "":
		return EscapeLine(r.Error)
	}
	return "ended" + took
}
