package drive

import (
	"slices"
	"strconv"
)

// Choice is the answer a person's reply gives to the question p: a
// number picks an option (1 the first); a question with options that
// allows no free text takes only one of them (ok is false for anything
// else). An empty reply is no answer (ok false).
func (p Pending) Choice(reply string) (answer string, ok bool) {
	if n, err := strconv.Atoi(reply); err == nil && n >= 1 && n <= len(p.Options) {
		reply = p.Options[n-1]
	}
	if reply == "" || len(p.Options) > 0 && !p.AllowFreeText && !slices.Contains(p.Options, reply) {
		return "", false
	}
	return reply, true
}
