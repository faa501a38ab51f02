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
	"github.com/seed-7cc7a084/harness/tell"
)

// asked asks, at the terminal a plain run or resume holds, a question
// an MCP server put while the thread's actions run (drive.EventAsked),
// one at a time (d.elicits): the person answers there, or on the page,
// the API or another terminal — whichever answer the log holds first
// stands. The answer is checked and posted by drive as the API's is.
func (d *driver) asked(e drive.Event) {
	if e.Elicit == nil {
		return
	}
	d.elicits.Go(func(ctx context.Context) {
		if d.prompter == nil {
			d.prompter = newPrompter(d.a.stdin, d.a.stdout)
		}
		if err := d.askElicit(ctx, e); err != nil && ctx.Err() == nil {
			fmt.Fprintf(d.a.stdout, "%s %s\n", d.a.paint("yellow", "not answered here:"), present.EscapeLine(err.Error()))
		}
	})
}

// askElicit asks the person the MCP server's question e and posts the
// answer; a question answered elsewhere meanwhile, or no longer asked,
// ends the prompt with a word of it.
func (d *driver) askElicit(ctx context.Context, e drive.Event) error {
	hold := d.live.Hold()
	defer hold()
	th := d.rt.Thread(d.s.Stock.Actor, e.Thread)
	p := drive.AskedPending(e)
	watched, done, err := drive.WatchAsked(ctx, th, p)
	if err != nil {
		return err
	}
	r, err := d.elicitForm(watched, e, p)
	gone := done()
	var elsewhere *drive.Elsewhere
	switch {
	case errors.As(gone, &elsewhere):
		d.saidElsewhere(elsewhere)
		return nil
	case gone != nil:
		fmt.Fprintf(d.a.stdout, "%s the MCP server %s does not wait for an answer any more\n", d.a.paint("yellow", "not asked any more:"), present.EscapeLine(e.Elicit.Server))
		return nil
	case ctx.Err() != nil:
		return nil
	case errors.Is(err, errNoAnswer):
		fmt.Fprintf(d.a.stdout, "    left for an answer elsewhere: harness answer %s --request %s --elicit accept|decline|cancel, or the page\n",
			present.EscapeLine(shellWord(e.Thread)), present.EscapeLine(shellWord(e.Request)))
		return nil
	case err != nil:
		return err
	}
	posted, err := drive.AnswerPending(ctx, th, p, r)
	if errors.Is(err, drive.ErrAnswerDiffers) {
		fmt.Fprintf(d.a.stdout, "%s your answer to %s was not recorded: %s\n", d.a.paint("yellow", "answered elsewhere:"),
			present.EscapeLine(e.Request), present.EscapeLine(err.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(d.a.stdout, "    %s: sent to %s (question.answered at seq %d)\n", r.Elicit, present.EscapeLine(e.Elicit.Server), posted.Seq)
	return nil
}

// elicitForm reads the person's answer to the server's form: accept with
// each field read (typed and checked as the API checks it), decline or
// cancel; skip leaves it to be answered elsewhere (errNoAnswer).
func (d *driver) elicitForm(ctx context.Context, e drive.Event, p drive.Pending) (drive.Reply, error) {
	by := d.a.whoami()
	server := present.EscapeLine(e.Elicit.Server)
	ask := d.prompter.askKey // one key; after an unclear one, a line
	for {
		key, err := ask(ctx, fmt.Sprintf("Answer %s? [a]ccept (fill in its form), [d]ecline, [c]ancel, [s]kip (answer elsewhere): ", server))
		if err != nil {
			return drive.Reply{}, err
		}
		r := drive.Reply{Kind: fold.WaitQuestion, Request: e.Request, By: by}
		switch strings.ToLower(key) {
		case "a", "accept":
			r.Elicit = facts.ElicitAccept
			fields, err := d.elicitFields(ctx, e)
			if err != nil {
				return drive.Reply{}, err
			}
			r.Fields = fields
		case "d", "decline":
			r.Elicit = facts.ElicitDecline
		case "c", "cancel":
			r.Elicit = facts.ElicitCancel
		case "s", "skip":
			return drive.Reply{}, errNoAnswer
		default:
			fmt.Fprintf(d.a.stdout, "    %q is not an answer: type a, d, c or s, then Enter\n", present.EscapeLine(key))
			ask = d.prompter.ask
			continue
		}
		// The whole answer, checked against the server's schema as the
		// API checks it, before anything is posted.
		if _, err := r.Draft(p); err != nil {
			fmt.Fprintf(d.a.stdout, "    %s\n", present.EscapeLine(err.Error()))
			ask = d.prompter.askKey
			continue
		}
		return r, nil
	}
}

// elicitFields reads each field of the server's form, as text by name;
// an empty answer to a field not required leaves it out.
func (d *driver) elicitFields(ctx context.Context, e drive.Event) (map[string]string, error) {
	fields := map[string]string{}
	for _, f := range drive.ElicitFields(e.Elicit) {
		label := tell.FieldLabel(f)
		if f.Description != "" {
			fmt.Fprintf(d.a.stdout, "    %s: %s\n", present.EscapeLine(f.Name), present.EscapeLine(f.Description))
		}
		for i, o := range f.Enum {
			fmt.Fprintf(d.a.stdout, "      %d) %s\n", i+1, present.EscapeLine(o))
		}
		for {
			var v string
			var err error
			if f.Secret {
				v, err = d.prompter.Hidden(ctx, func(hidden bool) string {
					if hidden {
						return fmt.Sprintf("    %s — it looks like a secret: what you type is not shown, but it is recorded in the thread's log and sent to the server: ", label)
					}
					return fmt.Sprintf("    %s — it looks like a secret: this terminal shows what you type, and it is recorded in the thread's log and sent to the server: ", label)
				})
			} else {
				v, err = d.prompter.ask(ctx, fmt.Sprintf("    %s: ", label))
			}
			if err != nil {
				return nil, err
			}
			v = f.Pick(v) // a number picks a choice, unless it is one
			if v == "" && f.Required {
				fmt.Fprintf(d.a.stdout, "    %s is required\n", present.EscapeLine(f.Name))
				continue
			}
			if err := f.Check(v); err != nil {
				fmt.Fprintf(d.a.stdout, "    %s\n", present.EscapeLine(err.Error()))
				continue
			}
			if v != "" {
				fields[f.Name] = v
			}
			break
		}
	}
	return fields, nil
}
