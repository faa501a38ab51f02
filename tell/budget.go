package tell

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
)

// BudgetDoc is the budget of a tree, as JSON.
type BudgetDoc struct {
	Thread   string        `json:"thread"`
	Status   string        `json:"status"`
	Budget   *drive.Budget `json:"budget"`
	Turns    int           `json:"turns"`
	MaxTurns int           `json:"max_turns,omitempty"`
}

// BudgetDocOf is the budget of the tree whose root's state is st.
func BudgetDocOf(st drive.State) BudgetDoc {
	return BudgetDoc{st.Thread, string(st.Status), st.Budget, st.Turns, st.MaxTurns}
}

// Budget tells what the tree whose root's state is st spent, of what;
// none says how to give one when the tree has no budget in money or
// tokens.
func Budget(w io.Writer, st drive.State, none string) {
	turns := ""
	if st.MaxTurns > 0 {
		turns = fmt.Sprintf("; %d of %s", st.Turns, present.Plural(st.MaxTurns, "model turn", "model turns"))
	}
	if st.Budget == nil {
		fmt.Fprintf(w, "thread %s (%s): no budget in money or tokens (%s)%s\n", st.Thread, st.Status, none, turns)
		return
	}
	bd := st.Budget
	fmt.Fprintf(w, "thread %s (%s): spent %s of %s%s\n", st.Thread, st.Status, Amount(bd.Spent, bd.Limit), Amount(bd.Limit, bd.Limit), turns)
}

// Amount says an amount, in the units limit bounds.
func Amount(s, limit facts.Spend) string {
	out := ""
	if limit.USD > 0 {
		out = fmt.Sprintf("$%.4f", s.USD)
	}
	if limit.Tokens > 0 {
		if out != "" {
			out += ", "
		}
		out += present.Plural(s.Tokens, "token", "tokens")
	}
	return out
}

// SearchHits tells the hits of a search, newest first: thread and seq,
// kind, time and the excerpt (escaped), or that none was found.
func SearchHits(w io.Writer, hits []drive.SearchHit) error {
	if len(hits) == 0 {
		_, err := fmt.Fprintln(w, "no facts found")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, h := range hits {
		fmt.Fprintf(tw, "%s #%d\t%s\t%s\t%s\n", h.Thread, h.Seq, h.Kind, h.At.Local().Format("2006-01-02 15:04"), present.EscapeLine(h.Excerpt))
	}
	return tw.Flush()
}

// ShellArgs writes args back as a shell would read them: each in single
// quotes when it holds anything but letters, digits and -_.:/@.
func ShellArgs(args []string) string {
	out := make([]string, len(args))
	for i, arg := range args {
		plain := arg != ""
		for _, r := range arg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@", r)) {
				plain = false
				break
			}
		}
		if plain {
			out[i] = arg
		} else {
			out[i] = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
