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
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/thread"
)

// prompter asks a person at the terminal. Lines are read by one
// goroutine, so that an interrupt (Ctrl-C), or an answer given elsewhere,
// ends a wait for an answer.
type prompter struct {
	out   io.Writer
	lines chan line
	// since: a line typed before it answers nothing (see fresh). Set and
	// read by the goroutine that asks.
	since time.Time
}

type line struct {
	text string
	err  error
	at   time.Time // when it was read
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	p := &prompter{out: out, lines: make(chan line)}
	go func() {
		r := bufio.NewReader(in)
		for {
			text, err := r.ReadString('\n')
			p.lines <- line{text, err, time.Now()}
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

// fresh starts a new request: a line typed before now — a late key for
// a request that was answered elsewhere while the person typed — answers
// nothing, and is dropped. (The lines of one request may be typed ahead:
// "n", then its reason.)
func (p *prompter) fresh() { p.since = time.Now() }

// ask prints question and returns the line typed, trimmed. An interrupt
// returns the context's error.
func (p *prompter) ask(ctx context.Context, question string) (string, error) {
	fmt.Fprint(p.out, question)
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(p.out)
			return "", ctx.Err()
		case l, ok := <-p.lines:
			if ok && l.err == nil && l.at.Before(p.since) {
				continue // typed for a request that is gone
			}
			if !ok || (l.err != nil && l.text == "") {
				fmt.Fprintln(p.out)
				return "", errNoAnswer
			}
			return strings.TrimSpace(l.text), nil
		}
	}
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
		peek, unpeek := d.peeker()
		asked, done, err := drive.WatchAnswer(ctx, d.th, w, peek)
		if err != nil {
			return answered, err
		}
		var ans answer
		if err := d.release(); err != nil {
			done()
			unpeek()
			return answered, err
		}
		switch w.Kind {
		case fold.WaitConfirmation:
			ans, err = d.askConfirmation(asked, w, by)
		case fold.WaitQuestion:
			ans.reply, err = d.askQuestion(asked, w, by)
		case fold.WaitReconcile:
			ans.reply, err = d.askReconcile(asked, w, by)
		}
		gone := done()
		unpeek()
		if ctx.Err() != nil {
			return answered, fmt.Errorf("interrupted at the prompt; thread %s still waits: `harness resume %s` asks again", d.id, d.id)
		}
		if rerr := d.reacquire(ctx); rerr != nil {
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
		answered++
		if ans.stop || ans.always != nil {
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

// peeker reads the store for a watch of the thread while the prompt has
// let go of it (see drive.Peek). A store in a directory is opened, read
// only, only when its database's files changed since the last look
// (someone wrote; before the first, since the prompt let go: what came
// before, the watch read while the prompt held the store — call peeker
// before letting go), and closed at once:
// the process that answers needs it; while another process holds it, the
// watch looks again later. A store others share (a server's, NATS) is
// opened at the first look and kept until done is called.
func (d *driver) peeker() (peek drive.Peek, done func()) {
	_, direct := d.s.Store.(*thread.PebbleStore)
	var (
		stamp string
		kept  thread.Store
	)
	if direct {
		stamp = dbStamp(d.s.Place.DB())
	}
	peek = func(ctx context.Context, look func(thread.Store) error) error {
		if kept != nil {
			return look(kept)
		}
		if direct {
			now := dbStamp(d.s.Place.DB())
			if now == stamp {
				return nil
			}
			s, err := d.s.Place.OpenStoreReadOnly(ctx, 0)
			if err != nil {
				return nil // held by another process: it is writing; later
			}
			defer s.Close()
			stamp = now
			return look(s)
		}
		s, err := d.s.Place.OpenStoreReadOnly(ctx, 0)
		if err != nil {
			return nil
		}
		kept = s
		return look(s)
	}
	return peek, func() {
		if kept != nil {
			kept.Close()
		}
	}
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
