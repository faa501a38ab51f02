package tell

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/present/ask"
)

// Event asks, at the terminal, a question an MCP server put while the
// thread's actions run (drive.EventAsked), one at a time: the person
// answers there, or on the page, the API or another terminal — whichever
// answer the log holds first stands. The answer is checked and posted by
// drive as the API's is. Other events, and a nil Asker, ask nothing.
func (a *Asker) Event(e drive.Event) {
	if a == nil || e.Kind != drive.EventAsked || e.Elicit == nil {
		return
	}
	a.elicits.Go(func(ctx context.Context) {
		if err := a.elicit(ctx, e); err != nil && ctx.Err() == nil {
			a.say("%s %s", a.Paint.on("yellow", "not answered here:"), present.EscapeLine(err.Error()))
		}
	})
}

// elicit asks the person the MCP server's question e and posts the
// answer; a question answered elsewhere meanwhile, or no longer asked,
// ends the prompt with a word of it.
func (a *Asker) elicit(ctx context.Context, e drive.Event) error {
	hold := a.Live.Hold()
	defer hold()
	th := a.Driver.Thread(e.Thread)
	p := drive.AskedPending(e)
	watched, done, err := drive.WatchAsked(ctx, th, p)
	if err != nil {
		return err
	}
	r, err := a.elicitForm(watched, e, p)
	gone := done()
	var elsewhere *drive.Elsewhere
	switch {
	case errors.As(gone, &elsewhere):
		a.saidElsewhere(elsewhere)
		return nil
	case gone != nil:
		a.say("%s the MCP server %s does not wait for an answer any more", a.Paint.on("yellow", "not asked any more:"), present.EscapeLine(e.Elicit.Server))
		return nil
	case ctx.Err() != nil:
		return nil
	case errors.Is(err, ask.ErrNoAnswer):
		if a.LeftElsewhere != nil {
			a.say("    %s", a.LeftElsewhere(e))
		}
		return nil
	case err != nil:
		return err
	}
	posted, err := drive.AnswerPending(ctx, th, p, r)
	if errors.Is(err, drive.ErrAnswerDiffers) {
		a.notRecorded(e.Request, err)
		return nil
	}
	if err != nil {
		return err
	}
	a.say("    %s: sent to %s (question.answered at seq %d)", r.Elicit, present.EscapeLine(e.Elicit.Server), posted.Seq)
	return nil
}

// elicitForm reads the person's answer to the server's form: accept with
// each field read (typed and checked as the API checks it), decline or
// cancel; skip leaves it to be answered elsewhere (ask.ErrNoAnswer).
func (a *Asker) elicitForm(ctx context.Context, e drive.Event, p drive.Pending) (drive.Reply, error) {
	server := present.EscapeLine(e.Elicit.Server)
	pr := a.prompt()
	read := pr.Key // one key; after an unclear one, a line
	for {
		key, err := read(ctx, fmt.Sprintf("Answer %s? [a]ccept (fill in its form), [d]ecline, [c]ancel, [s]kip (answer elsewhere): ", server))
		if err != nil {
			return drive.Reply{}, err
		}
		action, skip, ok := drive.ParseElicitKey(key)
		switch {
		case !ok:
			a.notAnAnswer(key, "a, d, c or s, then Enter")
			read = pr.Line
			continue
		case skip:
			return drive.Reply{}, ask.ErrNoAnswer
		}
		r := drive.Reply{Kind: fold.WaitQuestion, Request: e.Request, By: a.By, Elicit: action}
		if action == facts.ElicitAccept {
			if r.Fields, err = a.elicitFields(ctx, e); err != nil {
				return drive.Reply{}, err
			}
		}
		// The whole answer, checked against the server's schema as the
		// API checks it, before anything is posted.
		if _, err := r.Draft(p); err != nil {
			a.say("    %s", present.EscapeLine(err.Error()))
			read = pr.Key
			continue
		}
		return r, nil
	}
}

// elicitFields reads each field of the server's form, as text by name;
// an empty answer to a field not required leaves it out.
func (a *Asker) elicitFields(ctx context.Context, e drive.Event) (map[string]string, error) {
	fields := map[string]string{}
	for _, f := range drive.ElicitFields(e.Elicit) {
		label := FieldLabel(f)
		if f.Description != "" {
			a.say("    %s: %s", present.EscapeLine(f.Name), present.EscapeLine(f.Description))
		}
		for i, o := range f.Enum {
			a.say("      %d) %s", i+1, present.EscapeLine(o))
		}
		for {
			v, err := a.field(ctx, f, label)
			if err != nil {
				return nil, err
			}
			v = f.Pick(v) // a number picks a choice, unless it is one
			if v == "" && f.Required {
				a.say("    %s is required", present.EscapeLine(f.Name))
				continue
			}
			if err := f.Check(v); err != nil {
				a.say("    %s", present.EscapeLine(err.Error()))
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

// field reads one field's value: a secret not echoed where the terminal
// can hide it, and said to be recorded either way.
func (a *Asker) field(ctx context.Context, f drive.ElicitField, label string) (string, error) {
	if !f.Secret {
		return a.prompt().Line(ctx, fmt.Sprintf("    %s: ", label))
	}
	return a.prompt().Hidden(ctx, func(hidden bool) string {
		if hidden {
			return fmt.Sprintf("    %s — it looks like a secret: what you type is not shown, but it is recorded in the thread's log and sent to the server: ", label)
		}
		return fmt.Sprintf("    %s — it looks like a secret: this terminal shows what you type, and it is recorded in the thread's log and sent to the server: ", label)
	})
}
