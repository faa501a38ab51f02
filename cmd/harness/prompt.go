package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
)

// prompter asks a person at the terminal. Input is read by one
// goroutine, so that an interrupt (Ctrl-C), or an answer given elsewhere,
// ends a wait for an answer. A choice (askKey) is one key: the terminal is
// put in raw mode while it waits for it, and Enter after the key is still
// accepted; text (ask) is a line, edited as the terminal edits lines.
// Only what is typed after a question is put answers it: a key typed
// ahead, or late for a question that is gone, answers nothing.
type prompter struct {
	out    io.Writer
	chunks chan chunk
	// fd is the input's terminal, or -1: keys are then read from lines.
	fd int
	// The state of the goroutine that asks (no one else reads it):
	// pending is input read and not yet taken, each byte with when it
	// was read; since: input read before it answers nothing (the time
	// the question being asked was put);
	// swallow: until then, an Enter read is the key just taken's (typed
	// with it), not an answer of its own; at: when the byte next gave
	// last was read; eof: the input ended.
	pending []typed
	since   time.Time
	swallow time.Time
	at      time.Time
	eof     bool
}

// chunk is what one read of the input gave.
type chunk struct {
	data []byte
	err  error
	at   time.Time
}

// typed is one byte of input, and when it was read.
type typed struct {
	b  byte
	at time.Time
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	p := &prompter{out: out, chunks: make(chan chunk), fd: -1}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.fd = int(f.Fd())
	}
	go func() {
		buf := make([]byte, 512)
		for {
			n, err := in.Read(buf)
			p.chunks <- chunk{bytes.Clone(buf[:n]), err, time.Now()}
			if err != nil {
				close(p.chunks)
				return
			}
		}
	}()
	return p
}

// errNoAnswer: the input ended before an answer.
var errNoAnswer = errors.New("no answer")

// fresh puts a new question: input typed before now — a key typed ahead,
// or late for a request that was answered elsewhere while the person
// typed — answers nothing, and is dropped.
func (p *prompter) fresh() { p.since = time.Now() }

// next takes the next byte typed for the request being asked; ok is
// false when the input ended.
func (p *prompter) next(ctx context.Context) (b byte, ok bool, err error) {
	for {
		for len(p.pending) > 0 {
			t := p.pending[0]
			p.pending = p.pending[1:]
			if t.at.Before(p.since) {
				if isEnter(t.b) && !t.at.After(p.swallow) {
					p.swallow = time.Time{} // the key's Enter, dropped with it
				}
				continue // typed for a request that is gone
			}
			p.at = t.at
			return t.b, true, nil
		}
		if p.eof {
			return 0, false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case c, open := <-p.chunks:
			for _, b := range c.data {
				p.pending = append(p.pending, typed{b, c.at})
			}
			if !open || c.err != nil {
				p.eof = true
			}
		}
	}
}

// keyEnter is how soon after a key an Enter is taken as typed with it
// (a person used to Enter after each answer): later, it is an answer of
// its own — the Enter that keeps a rule shown after the key, say.
const keyEnter = 400 * time.Millisecond

// swallowed reports whether b, just read, is an Enter typed with the key
// taken before it; any byte ends the swallow.
func (p *prompter) swallowed(b byte) bool {
	until := p.swallow
	p.swallow = time.Time{}
	return isEnter(b) && !p.at.After(until)
}

// isEnter reports whether b ends a line (a terminal in raw mode sends
// Enter as a carriage return).
func isEnter(b byte) bool { return b == '\n' || b == '\r' }

// ask prints question and returns the line typed, trimmed. An interrupt
// returns the context's error.
func (p *prompter) ask(ctx context.Context, question string) (string, error) {
	p.fresh()
	fmt.Fprint(p.out, question)
	var line []byte
	for {
		b, ok, err := p.next(ctx)
		if err != nil {
			fmt.Fprintln(p.out)
			return "", err
		}
		if !ok {
			if len(line) == 0 {
				fmt.Fprintln(p.out)
				return "", errNoAnswer
			}
			return strings.TrimSpace(string(line)), nil
		}
		if p.swallowed(b) {
			continue // the Enter after the key just taken
		}
		if isEnter(b) {
			return strings.TrimSpace(string(line)), nil
		}
		if len(line) >= maxStdinAnswer {
			return "", fmt.Errorf("an answer longer than %d bytes", maxStdinAnswer)
		}
		line = append(line, b)
	}
}

// askKey prints question and returns the one key typed, lower case, ""
// for Enter alone. On a terminal it reads the key in raw mode, so that it
// needs no Enter (an Enter typed after it is the key's). Ctrl-C
// interrupts, as at a line. Off a terminal it reads a line.
func (p *prompter) askKey(ctx context.Context, question string) (string, error) {
	if p.fd < 0 {
		return p.ask(ctx, question)
	}
	p.fresh()
	fmt.Fprint(p.out, question)
	old, err := term.MakeRaw(p.fd)
	if err != nil {
		return "", fmt.Errorf("read a key: %w", err)
	}
	var b byte
	var ok bool
	for {
		b, ok, err = p.next(ctx)
		if ok && p.swallowed(b) {
			continue
		}
		break
	}
	_ = term.Restore(p.fd, old)
	switch {
	case err != nil:
		fmt.Fprintln(p.out)
		return "", err
	case !ok || b == 4: // Ctrl-D
		fmt.Fprintln(p.out)
		return "", errNoAnswer
	case b == 3: // Ctrl-C: raw mode makes it a key; make it the interrupt it is
		fmt.Fprintln(p.out)
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			return "", err
		}
		<-ctx.Done()
		return "", ctx.Err()
	}
	if isEnter(b) {
		fmt.Fprintln(p.out)
		return "", nil
	}
	p.swallow = time.Now().Add(keyEnter) // an Enter typed with the key is the key's
	key := strings.ToLower(present.EscapeLine(string(b)))
	fmt.Fprintln(p.out, key)
	return key, nil
}

// prompt asks a person each open request and posts the answers as harness
// post would. It returns how many it answered (an answer someone else gave
// meanwhile counts); a request left unanswered (the input ended, or the
// person skipped it) leaves the thread parked. The store is closed while
// the person thinks.
//
// The log decides (drive.WatchAnswer): a request answered elsewhere while
// it is asked — on the page, through the API, from another terminal — or
// a thread stopped meanwhile ends the question; the prompt says what was
// answered by whom, and the thread goes on from the log.
func (d *driver) prompt(ctx context.Context, waits []drive.Pending) (int, error) {
	answered := 0
	by := d.a.whoami()
	for _, w := range waits {
		fmt.Fprintln(d.a.stdout)
		d.a.printPending(w, d.s.Place.Root)
		d.prompter.fresh()
		peek, unpeek := d.s.Peeker()
		asked, done, err := drive.WatchAnswer(ctx, d.th, w, peek)
		if err != nil {
			return answered, err
		}
		var ans answer
		if err := d.Release(); err != nil {
			done()
			unpeek()
			return answered, err
		}
		act := false
		switch w.Kind {
		case fold.WaitPlan:
			act, err = d.askPlan(asked, w)
		case fold.WaitConfirmation:
			ans, err = d.askConfirmation(asked, w, by)
		case fold.WaitQuestion:
			ans.reply, err = d.askQuestion(asked, w, by)
		case fold.WaitReconcile:
			ans.reply, err = d.askReconcile(asked, w, by)
		case fold.WaitBudget:
			ans, err = d.askBudget(asked, w, by)
		}
		gone := done()
		unpeek()
		if ctx.Err() != nil {
			return answered, fmt.Errorf("interrupted at the prompt; thread %s still waits: `harness resume %s` asks again", d.id, d.id)
		}
		if rerr := d.Reacquire(ctx); rerr != nil {
			return answered, rerr
		}
		if gone != nil {
			// Not asked any more: the log moved on without this prompt.
			d.saidElsewhere(gone)
			answered++
			break
		}
		if errors.Is(err, errNoAnswer) {
			return answered, nil
		}
		if err != nil {
			return answered, err
		}
		if act {
			// The plan shown, no other: one made meanwhile is not it.
			if _, err := drive.AnswerPending(ctx, d.th, w, drive.Reply{Kind: fold.WaitPlan, Approved: true, By: by}); err != nil {
				return answered, err
			}
			answered++
			continue
		}
		if ans.reply == nil {
			continue // skipped
		}
		// A child's request goes to the child; an always-rule is the
		// thread's first: the rest of the thread is decided by it.
		p, err := d.s.AnswerPending(ctx, d.th, w, *ans.reply)
		if errors.Is(err, drive.ErrAnswerDiffers) {
			// Answered elsewhere in the moment between the last look
			// and this post: that answer stands, this one is not
			// recorded, and the person is told so before anything runs.
			fmt.Fprintf(d.a.stdout, "%s your answer to %s was not recorded: %s\n", d.a.paint("yellow", "answered elsewhere:"),
				present.EscapeLine(drive.Ref(w)), present.EscapeLine(err.Error()))
			answered++
			break
		}
		if err != nil {
			return answered, err
		}
		// Already answered meanwhile (from another terminal: the store is
		// free while the prompt waits) counts too: the thread has moved.
		if p.Duplicate {
			fmt.Fprintf(d.a.stdout, "(already answered at seq %d)\n", p.Seq)
		}
		if ans.reply.Project {
			file, _ := d.s.Place.ProjectRuleFile(d.a.getenv)
			fmt.Fprintf(d.a.stdout, "kept for this project: allow %s (in %s)\n", present.EscapeLine(ans.reply.Always), present.EscapeLine(file))
		}
		answered++
		if ans.stop || ans.reply.Always != "" {
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
