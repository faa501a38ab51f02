package present

import (
	"regexp"
	"strings"
	"sync"
)

// failedKey matches a failure as the fold says it: "KEY failed (CLASS):
// MESSAGE", or the runtime's "KEY failed and is still enabled: MESSAGE".
// Compiled at first use, not at every start of the program.
var failedKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\S+) failed(?: \(([a-z_]*)\)| and is still enabled)?: (.*)$`)
})

// modelClass matches a model error's prefix: "model: CLASS: ".
var modelClass = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^model: (transient|timeout|transport|permission|not_found|invalid_output|business|cancelled): `)
})

// Reason says why a thread failed or stopped, for a person: a transition's
// key as the step it names ("model turn 3", "action 1-call_1") and the
// message, without the error class the record keeps for programs
// ("(business)", "model: transient: "). Control characters are escaped (see EscapeLine).
func Reason(s string) string {
	m := failedKey().FindStringSubmatch(s)
	if m == nil {
		return EscapeLine(s)
	}
	return EscapeLine(Step(m[1]) + " failed: " + modelClass().ReplaceAllString(m[3], ""))
}

// Step names a transition key for a person: "infer/turn/3" is "model turn
// 3", "tool/execute/1-call_1" "action 1-call_1"; a key it does not know is
// itself.
func Step(key string) string {
	switch {
	case strings.HasPrefix(key, "infer/turn/"):
		return "model turn " + strings.TrimPrefix(key, "infer/turn/")
	case strings.HasPrefix(key, "tool/"):
		parts := strings.SplitN(key, "/", 3)
		if len(parts) == 3 {
			return "action " + parts[2]
		}
	case strings.HasPrefix(key, "question/ask/"):
		return "question of turn " + strings.TrimPrefix(key, "question/ask/")
	case strings.HasPrefix(key, "output/check/"):
		return "the output check of turn " + strings.TrimPrefix(key, "output/check/")
	case key == "system/configure":
		return "the thread's configuration"
	}
	return key
}
