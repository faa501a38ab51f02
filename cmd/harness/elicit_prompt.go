package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
)

// elicits asks, at the terminal a plain run or resume holds, the questions
// MCP servers put while the thread's actions run (drive.EventAsked): the
// person answers there, or on the page, the API or another terminal —
// whichever answer the log holds first stands. The answer is checked and
// posted by drive as the API's is.
type elicits struct {
	d *driver

	// mu guards what follows: the context of the drive running (nil: no
	// drive runs, and nothing is asked), and the prompts being asked.
	mu      sync.Mutex
	ctx     context.Context
	cancels map[int]context.CancelFunc
	n       int
	wg      sync.WaitGroup

	// one is held while a question is asked: one at a time at the terminal.
	one sync.Mutex
}

// begin lets questions be asked while the drive of ctx runs.
func (p *elicits) begin(ctx context.Context) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
}

// end stops asking: the questions being asked are let go of (they may
// still be answered elsewhere), and no more are.
func (p *elicits) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.ctx = nil
	p.mu.Unlock()
	p.settle()
}

// settle lets go of the questions being asked and waits for their
// prompts to end: the terminal is then the prompt's of the thread's waits.
func (p *elicits) settle() {
	if p == nil {
		return
	}
	p.mu.Lock()
	for _, cancel := range p.cancels {
		cancel()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// asked asks the question e at the terminal, while its drive runs.
func (p *elicits) asked(e drive.Event) {
	if p == nil || e.Elicit == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx == nil {
		return
	}
	ctx, cancel := context.WithCancel(p.ctx)
	if p.cancels == nil {
		p.cancels = map[int]context.CancelFunc{}
	}
	p.n++
	k := p.n
	p.cancels[k] = cancel
	if p.d.prompter == nil {
		p.d.prompter = newPrompter(p.d.a.stdin, p.d.a.stdout)
	}
	p.wg.Go(func() {
		defer func() {
			p.mu.Lock()
			delete(p.cancels, k)
			p.mu.Unlock()
			cancel()
		}()
		p.one.Lock()
		defer p.one.Unlock()
		if err := p.d.askElicit(ctx, e); err != nil && ctx.Err() == nil {
			fmt.Fprintf(p.d.a.stdout, "%s %s\n", p.d.a.paint("yellow", "not answered here:"), present.EscapeLine(err.Error()))
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
		label := fieldLabel(f)
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

// fieldLabel names a field of a server's form, escaped, with its type and
// whether it is required.
func fieldLabel(f drive.ElicitField) string {
	label := present.EscapeLine(f.Name)
	if f.Title != "" {
		label += " " + present.EscapeLine("("+f.Title+")")
	}
	kind := f.Type
	if f.Type == "boolean" {
		kind += ", yes or no"
	}
	if len(f.Enum) > 0 {
		kind += ", one of " + strconv.Itoa(len(f.Enum)) + " (a number or the value)"
	}
	if f.Required {
		kind += ", required"
	} else {
		kind += ", optional: Enter leaves it out"
	}
	return fmt.Sprintf("%s [%s]", label, kind)
}
