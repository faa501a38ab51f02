package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
)

// prompter asks a person at the terminal. Lines are read by one
// goroutine, so that an interrupt (Ctrl-C) ends a wait for an answer.
type prompter struct {
	out   io.Writer
	lines chan line
}

type line struct {
	text string
	err  error
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	p := &prompter{out: out, lines: make(chan line)}
	go func() {
		r := bufio.NewReader(in)
		for {
			text, err := r.ReadString('\n')
			p.lines <- line{text, err}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	return p
}

// errNoAnswer: the input ended before an answer.
var errNoAnswer = errors.New("no answer")

// ask prints question and returns the line typed, trimmed. An interrupt
// returns the context's error.
func (p *prompter) ask(ctx context.Context, question string) (string, error) {
	fmt.Fprint(p.out, question)
	select {
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return "", ctx.Err()
	case l, ok := <-p.lines:
		if !ok || (l.err != nil && l.text == "") {
			fmt.Fprintln(p.out)
			return "", errNoAnswer
		}
		return strings.TrimSpace(l.text), nil
	}
}

// prompt asks a person each open request and posts the answers as harness
// post would. It returns how many it answered (an answer someone else gave
// meanwhile counts); a request left unanswered (the input ended, or the
// person skipped it) leaves the thread parked. The store is closed while
// the person thinks.
func (d *driver) prompt(ctx context.Context, waits []drive.Pending) (int, error) {
	answered := 0
	by := d.a.whoami()
	for _, w := range waits {
		fmt.Fprintln(d.a.stdout)
		d.a.printPending(w, d.s.Place.Root)
		var ans answer
		if err := d.release(); err != nil {
			return answered, err
		}
		var err error
		act := false
		switch w.Kind {
		case fold.WaitPlan:
			act, err = d.askPlan(ctx, w)
		case fold.WaitConfirmation:
			ans, err = d.askConfirmation(ctx, w, by)
		case fold.WaitQuestion:
			ans.reply, err = d.askQuestion(ctx, w, by)
		case fold.WaitReconcile:
			ans.reply, err = d.askReconcile(ctx, w, by)
		}
		if ctx.Err() != nil {
			return answered, fmt.Errorf("interrupted at the prompt; thread %s still waits: `harness resume %s` asks again", d.id, d.id)
		}
		if rerr := d.reacquire(ctx); rerr != nil {
			return answered, rerr
		}
		if errors.Is(err, errNoAnswer) {
			return answered, nil
		}
		if err != nil {
			return answered, err
		}
		if act {
			if _, err := drive.ActOnPlan(ctx, d.th, by); err != nil {
				return answered, err
			}
			answered++
			continue
		}
		if ans.reply == nil {
			continue // skipped
		}
		if ans.always != nil {
			// The rule first: the rest of the thread is decided by it.
			if err := d.always(ctx, *ans.always); err != nil {
				return answered, err
			}
		}
		// A child's request goes to the child.
		p, err := drive.AnswerPending(ctx, d.th, w, *ans.reply)
		if err != nil {
			return answered, err
		}
		// Already answered meanwhile (from another terminal: the store is
		// free while the prompt waits) counts too: the thread has moved.
		if p.Duplicate {
			fmt.Fprintf(d.a.stdout, "(already answered at seq %d)\n", p.Seq)
		}
		answered++
		if ans.stop || ans.always != nil {
			// Stopped: nothing else of the turn runs, so nothing else is
			// asked. Always: the new rule may answer the rest.
			break
		}
	}
	return answered, nil
}

// answer is what a person said at the prompt: the reply (nil: skipped),
// and, for "always", the pattern to add to the thread's policy first;
// stop is a denial that stops the thread.
type answer struct {
	reply  *drive.Reply
	always *drive.Pattern
	stop   bool
}

// confirmKeys are the answers to a confirmation.
const confirmKeys = "y, a, n, d or s"

func (d *driver) askConfirmation(ctx context.Context, w drive.Pending, by string) (answer, error) {
	pattern := drive.Always(d.s.Place.Root, w.Tool, w.Args)
	question := fmt.Sprintf("Approve %s (%s)? [y]es, [a]lways for this thread (%s), [n]o and tell the model, [d]eny and stop, [s]kip: ",
		present.EscapeLine(drive.Ref(w)), present.EscapeLine(w.Tool), present.EscapeLine(pattern.String()))
	for {
		reply, err := d.prompter.ask(ctx, question)
		if err != nil {
			return answer{}, err
		}
		r := drive.Reply{Kind: fold.WaitConfirmation, Request: drive.Ref(w), By: by}
		switch strings.ToLower(reply) {
		case "y", "yes":
			r.Approved = true
		case "a", "always":
			r.Approved, r.Reason = true, "always: "+pattern.String()
			return answer{reply: &r, always: &pattern}, nil
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
			fmt.Fprintf(d.a.stdout, "    %q is not an answer: type %s\n", present.EscapeLine(reply), confirmKeys)
			continue
		}
		return answer{reply: &r}, nil
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
		if n, err := strconv.Atoi(reply); err == nil && n >= 1 && n <= len(w.Options) {
			reply = w.Options[n-1]
		}
		switch {
		case reply == "":
			continue
		case len(w.Options) > 0 && !w.AllowFreeText && !slices.Contains(w.Options, reply):
			fmt.Fprintf(d.a.stdout, "    answer one of the options (1-%d)\n", len(w.Options))
			continue
		}
		return &drive.Reply{Kind: fold.WaitQuestion, Request: drive.Ref(w), Text: reply, By: by}, nil
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
	for {
		reply, err := d.prompter.ask(ctx, fmt.Sprintf("Settle %s? [a]ccept it happened, [r]etry, a[b]andon, [s]kip: ", present.EscapeLine(drive.Ref(w))))
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
			fmt.Fprintf(d.a.stdout, "    %q is not an answer: type a, r, b or s\n", present.EscapeLine(reply))
			continue
		}
		note, err := d.prompter.ask(ctx, "Note (optional): ")
		if err != nil {
			return nil, err
		}
		return &drive.Reply{Kind: fold.WaitReconcile, Request: drive.Ref(w), Decision: dec, Reason: note, By: by}, nil
	}
}
