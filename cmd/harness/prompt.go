package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// prompt asks a person each open request and posts the answers as harness
// post would. It returns how many it answered (an answer someone else gave
// meanwhile counts); a request left unanswered (the input ended, or the
// person skipped it) leaves the thread parked. The store is closed while
// the person thinks.
//
// The log decides (stock.Driver.Ask): a request answered elsewhere while
// it is asked — on the page, through the API, from another terminal — or
// a thread stopped meanwhile ends the question; the prompt says what was
// answered by whom, and the thread goes on from the log.
func (d *driver) prompt(ctx context.Context, waits []drive.Pending) (int, error) {
	answered := 0
	by := d.a.whoami()
	for _, w := range waits {
		fmt.Fprintln(d.a.stdout)
		d.a.printPending(w, d.s.Place.Root)
		d.prompter.Fresh()
		got, said, err := d.Ask(ctx, d.th, w, func(asked context.Context) (stock.Said, error) {
			var ans answer
			var err error
			switch w.Kind {
			case fold.WaitPlan:
				act, err := d.askPlan(asked, w)
				if !act || err != nil {
					return stock.Said{}, err
				}
				// The plan shown, no other: one made meanwhile is not it.
				return stock.Said{Act: true, Reply: &drive.Reply{Kind: fold.WaitPlan, Approved: true, By: by}}, nil
			case fold.WaitConfirmation:
				ans, err = d.askConfirmation(asked, w, by)
			case fold.WaitQuestion:
				ans.reply, err = d.askQuestion(asked, w, by)
			case fold.WaitReconcile:
				ans.reply, err = d.askReconcile(asked, w, by)
			case fold.WaitBudget:
				ans, err = d.askBudget(asked, w, by)
			}
			return stock.Said{Reply: ans.reply, Stop: ans.stop}, err
		})
		switch {
		case ctx.Err() != nil:
			return answered, fmt.Errorf("interrupted at the prompt; thread %s still waits: `harness resume %s` asks again", d.id, d.id)
		case errors.Is(err, errNoAnswer):
			return answered, nil
		case err != nil:
			return answered, err
		case got.Elsewhere != nil:
			// Not asked any more: the log moved on without this prompt.
			d.saidElsewhere(got.Elsewhere)
			return answered + 1, nil
		case got.Differs != nil:
			// Answered elsewhere in the moment between the last look
			// and this post: that answer stands, this one is not
			// recorded, and the person is told so before anything runs.
			fmt.Fprintf(d.a.stdout, "%s your answer to %s was not recorded: %s\n", d.a.paint("yellow", "answered elsewhere:"),
				present.EscapeLine(drive.Ref(w)), present.EscapeLine(got.Differs.Error()))
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
			fmt.Fprintf(d.a.stdout, "(already answered at seq %d)\n", got.Posted.Seq)
		}
		if said.Reply.Project {
			file, _ := d.s.Place.ProjectRuleFile(d.a.getenv)
			fmt.Fprintf(d.a.stdout, "kept for this project: allow %s (in %s)\n", present.EscapeLine(said.Reply.Always), present.EscapeLine(file))
		}
		answered++
		if said.Stop || said.Reply.Always != "" {
			// Stopped: nothing else of the turn runs, so nothing else is
			// asked. Always: the new rule may answer the rest.
			break
		}
	}
	return answered, nil
}

// saidElsewhere tells the person that the request they were asked was
// answered elsewhere (or the thread stopped), by whom, and where it is.
func (d *driver) saidElsewhere(e *drive.Elsewhere) {
	where := ""
	if e.Fact.Seq != 0 {
		where = fmt.Sprintf(" (seq %d)", e.Fact.Seq)
	}
	fmt.Fprintf(d.a.stdout, "%s %s%s; not asking any more\n", d.a.paint("yellow", "answered elsewhere:"), present.EscapeLine(e.Said), where)
}

// answer is what a person said at the prompt: the reply (nil: skipped);
// stop: nothing else is asked after it (a denial that stops the thread, or
// a raise of the tree's budget, which answers every budget wait of it).
type answer struct {
	reply *drive.Reply
	stop  bool
}

// confirmKeys are the answers to a confirmation.
const confirmKeys = "y, a, p, n, d or s"

func (d *driver) askConfirmation(ctx context.Context, w drive.Pending, by string) (answer, error) {
	pattern := drive.Always(d.s.Place.Root, w.Tool, w.Args)
	project := drive.ProjectAlways(d.s.Place.Root, w.Tool, w.Args)
	question := fmt.Sprintf("Approve %s (%s)? [y]es, [a]lways for this thread (%s), always for this [p]roject (%s), [n]o and tell the model, [d]eny and stop, [s]kip: ",
		present.EscapeLine(drive.Ref(w)), present.EscapeLine(w.Tool), present.EscapeLine(pattern.String()), present.EscapeLine(project.String()))
	// One key; after a key that is no answer, a line: the rest of a word
	// typed whole must not answer key by key ("perhaps" holds an a).
	ask := d.prompter.askKey
	for {
		reply, err := ask(ctx, question)
		if err != nil {
			return answer{}, err
		}
		r := drive.Reply{Kind: fold.WaitConfirmation, Request: drive.Ref(w), By: by}
		switch strings.ToLower(reply) {
		case "y", "yes":
			r.Approved = true
		case "a", "always":
			r.Approved, r.Always = true, pattern.String()
			return answer{reply: &r}, nil
		case "p", "project":
			rule, err := d.askProjectRule(ctx, project)
			if err != nil {
				return answer{}, err
			}
			if rule == "" {
				ask = d.prompter.askKey
				continue // not kept: asked again
			}
			r.Approved, r.Always, r.Project = true, rule, true
			return answer{reply: &r}, nil
		case "n", "no":
			reason, err := d.prompter.ask(ctx, "Reason (optional; the model is told, and goes on): ")
			if err != nil {
				return answer{}, err
			}
			r.Reason, r.Then = reason, facts.DenyContinue
		case "d", "deny":
			reason, err := d.prompter.ask(ctx, "Reason (optional, for the record; the thread stops here): ")
			if err != nil {
				return answer{}, err
			}
			r.Reason, r.Then = reason, facts.DenyStop
			return answer{reply: &r, stop: true}, nil
		case "s", "skip":
			return answer{}, nil
		default:
			fmt.Fprintf(d.a.stdout, "    %q is not an answer: type %s, then Enter\n", present.EscapeLine(reply), confirmKeys)
			ask = d.prompter.ask
			continue
		}
		return answer{reply: &r}, nil
	}
}

// askProjectRule shows the rule "always, for this project" would keep,
// and where, before anything is kept: Enter keeps it, a pattern typed
// keeps that instead (a command's prefix, edited), "s" keeps none ("").
func (d *driver) askProjectRule(ctx context.Context, offer drive.Pattern) (string, error) {
	file, err := d.s.Place.ProjectRuleFile(d.a.getenv)
	if err != nil {
		fmt.Fprintf(d.a.stdout, "    no rule can be kept for this project: %s\n", present.EscapeLine(err.Error()))
		return "", nil
	}
	fmt.Fprintf(d.a.stdout, "    A rule for every later thread in %s, kept in your own %s (not in the workspace):\n        allow %s\n",
		present.EscapeLine(d.s.Place.Root), present.EscapeLine(file), present.EscapeLine(offer.String()))
	for {
		reply, err := d.prompter.ask(ctx, "    Enter keeps it; or type the rule to keep instead (TOOL:PATTERN), or s to keep none: ")
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
			fmt.Fprintf(d.a.stdout, "    %s\n", present.EscapeLine(err.Error()))
			continue
		}
		return p.String(), nil
	}
}

func (d *driver) askQuestion(ctx context.Context, w drive.Pending, by string) (*drive.Reply, error) {
	for i, o := range w.Options {
		fmt.Fprintf(d.a.stdout, "    %d) %s\n", i+1, present.EscapeLine(o))
	}
	for {
		reply, err := d.prompter.ask(ctx, "Answer: ")
		if err != nil {
			return nil, err
		}
		text, ok := w.Choice(reply)
		if !ok {
			if reply != "" {
				fmt.Fprintf(d.a.stdout, "    answer one of the options (1-%d)\n", len(w.Options))
			}
			continue
		}
		return &drive.Reply{Kind: fold.WaitQuestion, Request: drive.Ref(w), Text: text, By: by}, nil
	}
}

// askPlan asks whether to act on the plan the thread waits on (plan
// mode); a child's plan is answered through its own thread.
func (d *driver) askPlan(ctx context.Context, w drive.Pending) (bool, error) {
	if w.Thread != "" {
		return false, nil
	}
	for {
		reply, err := d.prompter.ask(ctx, fmt.Sprintf("Act on the plan %s? [y]es: plan mode off, and the model carries it out; [s]kip (or write to the thread for another plan): ", present.EscapeLine(drive.Ref(w))))
		if err != nil {
			return false, err
		}
		switch strings.ToLower(reply) {
		case "y", "yes":
			return true, nil
		case "s", "skip":
			return false, nil
		}
		fmt.Fprintf(d.a.stdout, "    %q is not an answer: type y or s\n", present.EscapeLine(reply))
	}
}

func (d *driver) askReconcile(ctx context.Context, w drive.Pending, by string) (*drive.Reply, error) {
	ask := d.prompter.askKey // one key; after an unclear one, a line
	for {
		reply, err := ask(ctx, fmt.Sprintf("Settle %s? [a]ccept it happened, [r]etry, a[b]andon, [s]kip: ", present.EscapeLine(drive.Ref(w))))
		if err != nil {
			return nil, err
		}
		var dec facts.Decision
		switch strings.ToLower(reply) {
		case "a", "accept":
			dec = facts.DecisionAccept
		case "r", "retry":
			dec = facts.DecisionRetry
		case "b", "abandon":
			dec = facts.DecisionAbandon
		case "s", "skip":
			return nil, nil
		default:
			fmt.Fprintf(d.a.stdout, "    %q is not an answer: type a, r, b or s, then Enter\n", present.EscapeLine(reply))
			ask = d.prompter.ask
			continue
		}
		note, err := d.prompter.ask(ctx, "Note (optional): ")
		if err != nil {
			return nil, err
		}
		return &drive.Reply{Kind: fold.WaitReconcile, Request: drive.Ref(w), Decision: dec, Reason: note, By: by}, nil
	}
}
