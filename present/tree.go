package present

import (
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// describeTree says what a delegation's records say: a spawn (or its
// refusal), a child's link to its parent, its end, its report, a stop.
func describeTree(f facts.Fact) (string, error) {
	switch f.Kind {
	case facts.KindChildSpawned:
		p, err := facts.Decode[facts.ChildSpawned](f)
		if p.Refused != "" {
			return fmt.Sprintf("%s delegation refused: %s", p.CallID, shorten(p.Refused, 100)), err
		}
		s := fmt.Sprintf("%s spawned child %s: %s · tools %s%s", p.CallID, p.Child, quote(p.Task, 80),
			orNone(strings.Join(p.Tools, ", ")), budgetWords(p.MaxTurns, p.MaxTokens))
		if p.Agent != nil {
			s += fmt.Sprintf(" · agent %s (%s %s, digest %s)", p.Agent.Name, p.Agent.Scope, p.Agent.Path, shortHash(p.Agent.Digest))
			if p.Agent.Model != "" {
				s += " · model " + p.Agent.Model
			}
		}
		return s, err
	case facts.KindThreadSpawned:
		p, err := facts.Decode[facts.ThreadSpawned](f)
		return fmt.Sprintf("child of %s, spawned at its seq %d (%s, hash %s)", p.Parent, p.Seq, p.Key, shortHash(p.Hash)), err
	case facts.KindThreadEnded:
		p, err := facts.Decode[facts.ThreadEnded](f)
		s := "ended " + string(p.Status)
		if p.Reason != "" {
			s += ": " + shorten(p.Reason, 80)
		}
		s += " · " + Plural(p.Turns, "turn", "turns") + ", " + Plural(p.Tokens, "token", "tokens")
		if p.Result != "" {
			s += " · " + quote(p.Result, 80)
		}
		return s, err
	case facts.KindChildReported:
		p, err := facts.Decode[facts.ChildReported](f)
		s := fmt.Sprintf("%s child %s %s", p.CallID, p.Child, p.Status)
		if p.Reason != "" {
			s += ": " + shorten(p.Reason, 80)
		}
		s += fmt.Sprintf(" at its seq %d (hash %s)", p.Seq, shortHash(p.Hash))
		if p.Result != "" {
			s += " · " + quote(p.Result, 80)
		}
		return s, err
	case facts.KindThreadStopped:
		p, err := facts.Decode[facts.ThreadStopped](f)
		return stopLine("stopped", p.By, p.Reason), err
	case facts.KindStopRequested:
		p, err := facts.Decode[facts.StopRequested](f)
		return stopLine("stop asked", p.By, p.Reason), err
	}
	return "", nil
}

// stopLine says a stop, or a stop asked for: by whom, and why.
func stopLine(what, by, reason string) string {
	s := what + " by " + orNone(by)
	if reason != "" {
		s += ": " + quote(reason, 80)
	}
	return s
}

func budgetWords(turns int, tokens int64) string {
	var parts []string
	if turns > 0 {
		parts = append(parts, Plural(turns, "turn", "turns"))
	}
	if tokens > 0 {
		parts = append(parts, Plural(tokens, "token", "tokens"))
	}
	if len(parts) == 0 {
		return ""
	}
	return " · budget " + strings.Join(parts, ", ")
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
