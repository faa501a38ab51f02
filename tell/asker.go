package tell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/present/ask"
	"github.com/seed-7cc7a084/harness/stock"
)

// Asker asks a person at a terminal what a thread driven here waits for
// — a confirmation, a question, a reconciliation, a plan, a budget — and
// an MCP server's questions while its actions run, and posts the answers
// (stock.Driver.Ask, drive.AnswerPending). What a reply means is drive's
// (ParseConfirmKey and the rest); the Asker asks and says. The log
// decides: a request answered elsewhere while it is asked — on the page,
// through the API, from another terminal — ends the question, and the
// person is told by whom.
type Asker struct {
	// Teller writes to the terminal (W) and describes each request.
	Teller
	// In is the terminal's input; the prompter reading it is made when
	// the first question is asked.
	In io.Reader
	// Driver drives the thread; Session is its (the workspace, for the
	// rules kept for a project).
	Driver  *stock.Driver
	Session *stock.Session
	// Getenv reads the environment (where a project's rules are kept).
	Getenv func(string) string
	// By is who answers, for the record.
	By string
	// Live, when set, is held while an MCP server's question is asked.
	Live *Live
	// Interrupted is the error of an interrupt at the prompt while the
	// thread id still waits; LeftElsewhere says how to answer the MCP
	// server's question e elsewhere once the person skipped it. The
	// command line gives them: they name its commands.
	Interrupted   func(id string) error
	LeftElsewhere func(e drive.Event) string

	prompter *ask.Prompter
	// elicits asks the servers' questions one at a time.
	elicits ask.Serial
}

// prompt is the prompter, made when first wanted.
func (a *Asker) prompt() *ask.Prompter {
	if a.prompter == nil {
		a.prompter = ask.New(a.In, a.W)
	}
	return a.prompter
}

// say writes a line to the terminal.
func (a *Asker) say(format string, args ...any) { fmt.Fprintf(a.W, format+"\n", args...) }

// Begin lets the MCP servers' questions be asked while the drive of ctx
// goes on (Event); End stops asking them. A nil Asker asks nothing.
func (a *Asker) Begin(ctx context.Context) {
	if a != nil {
		a.elicits.Begin(ctx)
	}
}

// End stops asking the servers' questions, letting go of the one asked.
func (a *Asker) End() {
	if a != nil {
		a.elicits.End()
	}
}

// Ask asks a person each open request of th and posts the answers
// (drive.Options.Ask). It returns how many it answered (an answer someone
// else gave meanwhile counts); a request left unanswered (the input ended,
// or the person skipped it) leaves the thread parked. The store is closed
// while the person thinks.
func (a *Asker) Ask(ctx context.Context, th *harness.Thread, waits []drive.Pending) (int, error) {
	a.elicits.Settle() // the terminal is the prompt's now
	answered := 0
	root := a.Session.Place.Root
	for _, w := range waits {
		fmt.Fprintln(a.W)
		a.Pending(w, root)
		a.prompt().Fresh()
		got, said, err := a.Driver.Ask(ctx, th, w, func(asked context.Context) (stock.Said, error) {
			return a.one(asked, w)
		})
		switch {
		case ctx.Err() != nil:
			return answered, a.Interrupted(th.ID())
		case errors.Is(err, ask.ErrNoAnswer):
			return answered, nil
		case err != nil:
			return answered, err
		case got.Elsewhere != nil:
			// Not asked any more: the log moved on without this prompt.
			a.saidElsewhere(got.Elsewhere)
			return answered + 1, nil
		case got.Differs != nil:
			// Answered elsewhere in the moment between the last look
			// and this post: that answer stands, this one is not
			// recorded, and the person is told so before anything runs.
			a.notRecorded(drive.Ref(w), got.Differs)
			return answered + 1, nil
		case said.Reply == nil:
			continue // skipped
		case said.Act:
			answered++
			continue
		}
		// Already answered meanwhile (from another terminal: the store is
		// free while the prompt waits) counts too: the thread has moved.
		if got.Posted.Duplicate {
			a.say("(already answered at seq %d)", got.Posted.Seq)
		}
		if said.Reply.Project {
			file, _ := a.Session.Place.ProjectRuleFile(a.Getenv)
			a.say("kept for this project: allow %s (in %s)", present.EscapeLine(said.Reply.Always), present.EscapeLine(file))
		}
		answered++
		if said.Stop {
			// Stopped: nothing else of the turn runs, so nothing else is
			// asked. Always: the new rule may answer the rest.
			break
		}
	}
	return answered, nil
}

// one asks the request w, by its kind.
func (a *Asker) one(ctx context.Context, w drive.Pending) (stock.Said, error) {
	switch w.Kind {
	case fold.WaitPlan:
		act, err := a.plan(ctx, w)
		if !act || err != nil {
			return stock.Said{}, err
		}
		// The plan shown, no other: one made meanwhile is not it.
		return stock.Said{Act: true, Reply: &drive.Reply{Kind: fold.WaitPlan, Approved: true, By: a.By}}, nil
	case fold.WaitConfirmation:
		return a.confirmation(ctx, w)
	case fold.WaitQuestion:
		return a.question(ctx, w)
	case fold.WaitReconcile:
		return a.reconcile(ctx, w)
	case fold.WaitBudget:
		return a.budget(ctx, w)
	}
	return stock.Said{}, nil
}

// notRecorded says that the answer to request was not recorded: another
// was, elsewhere, in the moment before.
func (a *Asker) notRecorded(request string, err error) {
	a.say("%s your answer to %s was not recorded: %s", a.Paint.on("yellow", "answered elsewhere:"), present.EscapeLine(request), present.EscapeLine(err.Error()))
}

// saidElsewhere tells the person that the request they were asked was
// answered elsewhere (or the thread stopped), by whom, and where it is.
func (a *Asker) saidElsewhere(e *drive.Elsewhere) {
	where := ""
	if e.Fact.Seq != 0 {
		where = fmt.Sprintf(" (seq %d)", e.Fact.Seq)
	}
	a.say("%s %s%s; not asking any more", a.Paint.on("yellow", "answered elsewhere:"), present.EscapeLine(e.Said), where)
}

// notAnAnswer says that reply answers nothing, and which keys do.
func (a *Asker) notAnAnswer(reply, keys string) {
	a.say("    %q is not an answer: type %s", present.EscapeLine(reply), keys)
}

func (a *Asker) confirmation(ctx context.Context, w drive.Pending) (stock.Said, error) {
	root := a.Session.Place.Root
	pattern := drive.Always(root, w.Tool, w.Args)
	project := drive.ProjectAlways(root, w.Tool, w.Args)
	question := fmt.Sprintf("Approve %s (%s)? [y]es, [a]lways for this thread (%s), always for this [p]roject (%s), [n]o and tell the model, [d]eny and stop, [s]kip: ",
		present.EscapeLine(drive.Ref(w)), present.EscapeLine(w.Tool), present.EscapeLine(pattern.String()), present.EscapeLine(project.String()))
	// One key; after a key that is no answer, a line: the rest of a word
	// typed whole must not answer key by key ("perhaps" holds an a).
	p := a.prompt()
	read := p.Key
	for {
		reply, err := read(ctx, question)
		if err != nil {
			return stock.Said{}, err
		}
		k := drive.ParseConfirmKey(reply)
		var rule, reason string
		switch k {
		case drive.ConfirmNoKey:
			a.notAnAnswer(reply, drive.ConfirmKeys+", then Enter")
			read = p.Line
			continue
		case drive.ConfirmAlways:
			rule = pattern.String()
		case drive.ConfirmProject:
			if rule, err = a.projectRule(ctx, project); err != nil {
				return stock.Said{}, err
			}
			if rule == "" {
				read = p.Key
				continue // not kept: asked again
			}
		case drive.ConfirmNo:
			reason, err = p.Line(ctx, "Reason (optional; the model is told, and goes on): ")
		case drive.ConfirmDeny:
			reason, err = p.Line(ctx, "Reason (optional, for the record; the thread stops here): ")
		}
		if err != nil {
			return stock.Said{}, err
		}
		r, ok := k.Reply(w, a.By, rule, reason)
		if !ok {
			return stock.Said{}, nil // skipped
		}
		return stock.Said{Reply: &r, Stop: k.Stops()}, nil
	}
}

// projectRule shows the rule "always, for this project" would keep, and
// where, before anything is kept: Enter keeps it, a pattern typed keeps
// that instead (a command's prefix, edited), "s" keeps none ("").
func (a *Asker) projectRule(ctx context.Context, offer drive.Pattern) (string, error) {
	file, err := a.Session.Place.ProjectRuleFile(a.Getenv)
	if err != nil {
		a.say("    no rule can be kept for this project: %s", present.EscapeLine(err.Error()))
		return "", nil
	}
	a.say("    A rule for every later thread in %s, kept in your own %s (not in the workspace):\n        allow %s",
		present.EscapeLine(a.Session.Place.Root), present.EscapeLine(file), present.EscapeLine(offer.String()))
	for {
		reply, err := a.prompt().Line(ctx, "    Enter keeps it; or type the rule to keep instead (TOOL:PATTERN), or s to keep none: ")
		if err != nil {
			return "", err
		}
		switch reply = strings.TrimSpace(reply); reply {
		case "":
			return offer.String(), nil
		case "s", "skip":
			return "", nil
		}
		p, err := drive.ParsePattern(reply)
		if err != nil {
			a.say("    %s", present.EscapeLine(err.Error()))
			continue
		}
		return p.String(), nil
	}
}

func (a *Asker) question(ctx context.Context, w drive.Pending) (stock.Said, error) {
	for i, o := range w.Options {
		a.say("    %d) %s", i+1, present.EscapeLine(o))
	}
	for {
		reply, err := a.prompt().Line(ctx, "Answer: ")
		if err != nil {
			return stock.Said{}, err
		}
		text, ok := w.Choice(reply)
		if !ok {
			if reply != "" {
				a.say("    answer one of the options (1-%d)", len(w.Options))
			}
			continue
		}
		return stock.Said{Reply: &drive.Reply{Kind: fold.WaitQuestion, Request: drive.Ref(w), Text: text, By: a.By}}, nil
	}
}

// plan asks whether to act on the plan the thread waits on (plan mode);
// a child's plan is answered through its own thread.
func (a *Asker) plan(ctx context.Context, w drive.Pending) (bool, error) {
	if w.Thread != "" {
		return false, nil
	}
	for {
		reply, err := a.prompt().Line(ctx, fmt.Sprintf("Act on the plan %s? [y]es: plan mode off, and the model carries it out; [s]kip (or write to the thread for another plan): ", present.EscapeLine(drive.Ref(w))))
		if err != nil {
			return false, err
		}
		if act, ok := drive.ParsePlanKey(reply); ok {
			return act, nil
		}
		a.notAnAnswer(reply, "y or s")
	}
}

func (a *Asker) reconcile(ctx context.Context, w drive.Pending) (stock.Said, error) {
	p := a.prompt()
	read := p.Key // one key; after an unclear one, a line
	for {
		reply, err := read(ctx, fmt.Sprintf("Settle %s? [a]ccept it happened, [r]etry, a[b]andon, [s]kip: ", present.EscapeLine(drive.Ref(w))))
		if err != nil {
			return stock.Said{}, err
		}
		dec, skip, ok := drive.ParseReconcileKey(reply)
		switch {
		case !ok:
			a.notAnAnswer(reply, "a, r, b or s, then Enter")
			read = p.Line
			continue
		case skip:
			return stock.Said{}, nil
		}
		note, err := p.Line(ctx, "Note (optional): ")
		if err != nil {
			return stock.Said{}, err
		}
		return stock.Said{Reply: &drive.Reply{Kind: fold.WaitReconcile, Request: drive.Ref(w), Decision: dec, Reason: note, By: a.By}}, nil
	}
}

// budget asks by how much to raise the budget of the tree that waits on
// it (drive.ParseRaiseReply); Enter skips. One raise answers every
// budget wait of the tree: nothing else is asked after it, and the tree
// goes on.
func (a *Asker) budget(ctx context.Context, w drive.Pending) (stock.Said, error) {
	for {
		reply, err := a.prompt().Line(ctx, fmt.Sprintf("Raise the tree's budget (%s)? By how much, such as $5, 200000 tokens or 5 turns; Enter skips: ", present.EscapeLine(drive.Ref(w))))
		if err != nil {
			return stock.Said{}, err
		}
		r, ok, err := drive.ParseRaiseReply(w, reply, a.By)
		switch {
		case err != nil:
			a.say("    %s", present.EscapeLine(err.Error()))
			continue
		case !ok:
			return stock.Said{}, nil
		}
		return stock.Said{Reply: &r, Stop: true}, nil
	}
}
