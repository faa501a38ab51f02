package harness

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Compact keeps the conversation the model sees within bounds. Before a
// model turn, a compaction is due when the conversation is longer than
// Config.CompactAt approximate tokens, or when the context nears the
// model's window: Config.ContextWindow, against the latest model turn's
// real usage (its input and output tokens, as the provider counted them)
// and the approximate size of what came after it. A compaction records
// context.compacted: a summary of all but the latest message, which the
// model sees in their place from then on. The log keeps everything.
//
// With a ContextWindow the summary is the model's: a compaction turn asks
// it (compactPrompt), and its request and response are kept, as for any
// turn; when it answers with no summary, or there is no model, or no
// window is configured, the summary is the extractive one (extract), which
// calls nothing — or Services.Summarize's, when set. A compaction turn
// that fails (its provider down) fails like a model turn, and runs again
// on the next Resume; a process that dies during it leaves nothing in the
// log, so the Resume after runs only it again.
func Compact() Part { return compactPart{} }

type compactPart struct{}

func (compactPart) add(a *assembly, prefix string) {
	a.build = append(a.build, func(k *kit) fold.Component[Services] {
		return &compactor{k: k, cfg: a.cfg, prefix: prefix}
	})
}

// compactor decides when a compaction is due. It keeps the latest own
// model turn (decoded only when its usage is asked) and where the latest
// compaction is.
type compactor struct {
	k      *kit
	cfg    Config
	prefix string

	turnSeq    uint64
	turnFact   facts.Fact // the latest own model.turn, its payload not decoded yet
	usage      facts.Usage
	decoded    bool
	unreadable bool // its payload could not be decoded
	compactSeq uint64
	// overflowSeq is the latest own model turn that failed because the
	// conversation did not fit the model's context; compacted counts the
	// compactions since the latest own model turn.
	overflowSeq uint64
	compacted   int
	// bounds are the thread's, once its system.configured recorded them
	// (recorded); until then, or in a log that recorded none, Config's.
	bounds   facts.ContextBounds
	recorded bool
	// hooks are the thread's recorded hooks; ran the runs of its
	// before_compaction hooks (see compactHook).
	hooks []facts.Hook
	ran   []facts.HookRan
}

// limits are the bounds the compactor goes by: the recorded ones, else
// Config's.
func (c *compactor) limits() facts.ContextBounds {
	if c.recorded {
		return c.bounds
	}
	return facts.ContextBounds{Window: c.cfg.ContextWindow, Fraction: c.cfg.CompactFraction, CompactAt: c.cfg.CompactAt}
}

func (c *compactor) Name() string { return "compact" }

func (c *compactor) Step(f facts.Fact) error {
	switch {
	case f.Kind == facts.KindModelTurn && strings.HasPrefix(f.Cause, c.prefix+"infer/turn/"):
		c.turnSeq, c.turnFact, c.decoded, c.unreadable = f.Seq, f, false, false
		c.compacted = 0
	case f.Kind == facts.KindContextCompacted:
		c.compactSeq = f.Seq
		c.compacted++
	case f.Kind == facts.KindTransitionFailed && strings.HasPrefix(f.Cause, c.prefix+"infer/turn/"):
		if tf, err := facts.Decode[facts.TransitionFailed](f); err == nil && tf.Class == facts.ClassContextOverflow {
			c.overflowSeq = f.Seq
		}
	case f.Kind == facts.KindSystemConfigured && f.Cause == c.prefix+"system/configure":
		// A log written before the bounds were recorded has none, and
		// goes by Config.
		sc, err := facts.Decode[facts.SystemConfigured](f)
		if err == nil && sc.Context != nil {
			c.bounds, c.recorded = *sc.Context, true
		}
		if err == nil {
			c.hooks = sc.Hooks
		}
	case f.Kind == facts.KindHookRan && strings.HasPrefix(f.Cause, c.prefix+"hook/"+facts.HookBeforeCompaction+"/"):
		if r, err := facts.Decode[facts.HookRan](f); err == nil {
			c.ran = append(c.ran, r)
		}
	case f.Kind == facts.KindContextBoundsSet:
		// A person's later word replaces the bounds recorded at the start.
		if b, err := facts.Decode[facts.ContextBoundsSet](f); err == nil {
			c.bounds, c.recorded = b.Bounds, true
		}
	}
	return nil
}

// lastUsage is the latest own model turn's usage; false when there is no
// such turn or it cannot be read.
func (c *compactor) lastUsage() (facts.Usage, bool) {
	if c.turnSeq == 0 || c.unreadable {
		return facts.Usage{}, false
	}
	if !c.decoded {
		mt, err := facts.Decode[facts.ModelTurn](c.turnFact)
		c.turnFact = facts.Fact{}
		if err != nil {
			c.unreadable = true
			return facts.Usage{}, false
		}
		c.usage, c.decoded = mt.Usage, true
	}
	return c.usage, true
}

// approxTokens estimates the tokens of a conversation: four bytes a token.
func approxTokens(msgs []facts.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Text)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Args)
		}
	}
	return n / 4
}

// contextSize is what the compactor reckons of the conversation the next
// model turn would be sent: its View.
type contextSize struct {
	// Approx is the conversation's size in approximate tokens.
	Approx int
	// Estimate is the tokens the next turn's context is reckoned to hold:
	// the latest turn's input and output tokens, as the provider counted
	// them, and the approximate size of what came after it. It is Approx
	// when no turn since the latest compaction reported usage.
	Estimate int64
	// Due is true when a compaction is due before the next turn.
	Due bool
}

// estimate is the tokens the next turn's context would hold: from the
// latest turn's real usage when one came after the latest compaction.
func (c *compactor) estimate(msgs []facts.Message, approx int) int64 {
	u, ok := c.lastUsage()
	if !ok || c.compactSeq > c.turnSeq || u.InputTokens+u.OutputTokens == 0 {
		return int64(approx)
	}
	i := slices.IndexFunc(msgs, func(m facts.Message) bool { return m.Seq > c.turnSeq })
	after := 0
	if i >= 0 {
		after = approxTokens(msgs[i:])
	}
	return u.InputTokens + u.OutputTokens + int64(after)
}

func (c *compactor) Output() fold.Output[Services] {
	s := c.k.scheduler
	lim := c.limits()
	window := lim.Window
	// A turn the server refused as longer than its context is compacted
	// for once, whatever the bounds: a second refusal after it stops the
	// run.
	overflowed := c.overflowSeq > c.compactSeq && c.compacted == 0
	if (!overflowed && lim.CompactAt <= 0 && window <= 0) || s == nil {
		return fold.Output[Services]{}
	}
	if v, ok := s.Output().View.(scheduler.View); !ok || v.Phase != scheduler.PhaseInfer {
		return fold.Output[Services]{}
	}
	msgs := s.Messages()
	size := contextSize{Approx: approxTokens(msgs)}
	size.Estimate = int64(size.Approx)
	if window > 0 {
		size.Estimate = c.estimate(msgs, size.Approx)
	}
	fraction := lim.Fraction
	if fraction == 0 {
		fraction = defaultCompactFraction
	}
	size.Due = overflowed || (lim.CompactAt > 0 && size.Approx > lim.CompactAt) ||
		(window > 0 && float64(size.Estimate) >= fraction*float64(window))
	if !size.Due || len(msgs) < 2 {
		size.Due = false
		return fold.Output[Services]{View: size}
	}
	older := msgs[:len(msgs)-1]
	upTo := older[len(older)-1].Seq
	key := c.prefix + "compact/" + strconv.FormatUint(upTo, 10)
	thread := ""
	if r, err := s.Current(); err == nil {
		thread = r.Thread
	}
	if t, ok := c.compactHook(thread, upTo); ok {
		return fold.Output[Services]{View: size, Transitions: []fold.Transition[Services]{t}}
	}
	recorded := ""
	if r, err := s.Current(); err == nil && r.System != nil {
		recorded = r.System.Model
	}
	e := compaction(c.cfg, thread, recorded, older, upTo, window > 0)
	return fold.Output[Services]{View: size, Transitions: []fold.Transition[Services]{{Key: key, Effect: e}}}
}

// compactHook is the run of the next before_compaction hook due before
// the compaction of the conversation up to seq upTo, if one is: each runs
// once for it, and what it says is for the record (a notification; it
// cannot stop the compaction).
func (c *compactor) compactHook(thread string, upTo uint64) (fold.Transition[Services], bool) {
	call := "upto-" + strconv.FormatUint(upTo, 10)
	for i, h := range c.hooks {
		if h.Event != facts.HookBeforeCompaction || slices.ContainsFunc(c.ran, func(r facts.HookRan) bool { return r.Call == call && r.Hook == i }) {
			continue
		}
		in := scheduler.HookInput{Event: h.Event, Thread: thread, Seq: upTo, Call: call}
		e := effect.AndThen(runHook(i, h, in), func(p facts.HookRan) effect.Effect[Services, []facts.Draft] {
			p.Event, p.Hook, p.Name, p.Scope, p.Digest, p.Call = h.Event, i, h.Name, h.Scope, h.Digest, call
			d, err := facts.NewDraft(facts.KindHookRan, "", p)
			if err != nil {
				return effect.Die[Services, []facts.Draft](err)
			}
			return effect.Succeed[Services]([]facts.Draft{d})
		})
		return fold.Transition[Services]{Key: c.prefix + "hook/" + h.Event + "/" + call + "/" + strconv.Itoa(i), Effect: e}, true
	}
	return fold.Transition[Services]{}, false
}

// compactPrompt is the system prompt of a compaction turn: the model is
// shown the conversation to summarize, then compactRequest.
const compactPrompt = "You are summarizing the conversation of a coding agent with its user and its tools, " +
	"so that the agent can go on with the work from your summary alone: it will no longer see the conversation itself. " +
	"Keep what the agent needs: the user's goal and every instruction or constraint they gave; " +
	"what was decided and why; the files read and changed, with what was found in them and what was changed; " +
	"the commands run and what they showed; errors met and how they were handled; and what remains to do. " +
	"Keep exact paths, names, numbers and error messages. Write plain prose and lists, no tool calls."

// compactRequest is the last message of a compaction turn's request.
const compactRequest = "Summarize the conversation above as the system prompt says. Answer with the summary only."

// compaction describes one compaction of the conversation up to the fact
// upTo: the summary of older, recorded as context.compacted.
func compaction(cfg Config, thread, recorded string, older []facts.Message, upTo uint64, byModel bool) effect.Effect[Services, []facts.Draft] {
	summarize := effect.FromAsync(func(ctx context.Context, svc Services) (facts.ContextCompacted, error) {
		cc := facts.ContextCompacted{UpTo: upTo, Messages: len(older)}
		switch {
		case svc.Summarize != nil:
			text, err := svc.Summarize(ctx, older)
			cc.Summary = text
			return cc, err
		case !byModel || (svc.Model == nil && cfg.agentModel == ""):
			cc.Summary, _ = extract(ctx, older)
			return cc, nil
		}
		m, err := modelOf(cfg, svc)
		if err != nil {
			return cc, err
		}
		req := model.Request{Thread: thread, System: compactPrompt,
			Messages: append(slices.Clone(older), facts.Message{Role: facts.RoleUser, Text: compactRequest})}
		d, err := m.Turn(ctx, req)
		if err != nil {
			return cc, err
		}
		if err := d.Usage.Validate(); err != nil {
			return cc, &model.Error{Class: facts.ClassInvalidOutput, Err: err}
		}
		cc.By, cc.Usage = facts.CompactedByModel, d.Usage
		cc.Cost, cc.Model = priced(cfg, recorded, d)
		if x := d.Exchange; x != nil && svc.Blobs != nil {
			ref, err := keepExchange(ctx, svc.Blobs, x)
			if err != nil {
				return cc, fmt.Errorf("keep the compaction's exchange: %w", err)
			}
			cc.Exchange = ref
		}
		cc.Summary = strings.TrimSpace(d.Text)
		if cc.Summary == "" {
			cc.Summary, _ = extract(ctx, older)
			cc.Fallback = "the model's answer held no summary"
		}
		return cc, nil
	})
	retried := modelRetry(cfg, summarize)
	// A model that cannot summarize (its answer is not one: a scripted
	// model has no compaction turns) leaves the extractive summary, said.
	fallback := effect.CatchFail(retried, func(err error) effect.Effect[Services, facts.ContextCompacted] {
		// A conversation too long for the model's context to summarize
		// is summarized without it.
		if c, ok := model.Classify(err); !ok || (c != facts.ClassInvalidOutput && c != facts.ClassContextOverflow) {
			return effect.Fail[Services, facts.ContextCompacted](err)
		}
		summary, _ := extract(context.Background(), older)
		return effect.Succeed[Services](facts.ContextCompacted{UpTo: upTo, Messages: len(older), Summary: summary,
			Fallback: "the model could not summarize: " + err.Error()})
	})
	return effect.AndThen(fallback, func(cc facts.ContextCompacted) effect.Effect[Services, []facts.Draft] {
		d, err := facts.NewDraft(facts.KindContextCompacted, "", cc)
		if err != nil {
			return effect.Die[Services, []facts.Draft](err)
		}
		return effect.Succeed[Services]([]facts.Draft{d})
	})
}

// modelRetry retries a call to the model on transient failures, as a
// model turn is retried: up to Config.ModelAttempts, after the backoff or
// the wait the server asked for.
func modelRetry[A any](cfg Config, call effect.Effect[Services, A]) effect.Effect[Services, A] {
	return retryNoting(cfg, call, nil)
}

// retryNoting is modelRetry, telling waited (when set) each wait it
// decides on.
func retryNoting[A any](cfg Config, call effect.Effect[Services, A], waited func(time.Duration)) effect.Effect[Services, A] {
	// The services are read first, so that their OnModelWait hears of the
	// retries' waits.
	services := effect.FromAsync(func(_ context.Context, svc Services) (Services, error) { return svc, nil })
	return effect.AndThen(services, func(svc Services) effect.Effect[Services, A] {
		return effect.Retry(call, effect.Policy{
			MaxAttempts: cfg.ModelAttempts,
			Backoff:     cfg.backoff(),
			MaxBackoff:  30 * cfg.backoff(),
			Jitter:      0.2,
			RetryIf:     model.IsTransient,
			Wait: func(err error, _ int, planned time.Duration) (time.Duration, error) {
				d, werr := modelWait(cfg, err, planned)
				if werr == nil && waited != nil {
					waited(d)
				}
				return d, werr
			},
			OnWait: svc.OnModelWait,
		})
	})
}

// extract is the summary that calls nothing: each message's role and first
// line, shortened. It is deterministic, so a compaction replays the same.
func extract(_ context.Context, msgs []facts.Message) (string, error) {
	var b strings.Builder
	for _, m := range msgs {
		line, _, _ := strings.Cut(strings.TrimSpace(m.Text), "\n")
		if len(line) > 160 {
			line = line[:160] + "…"
		}
		if len(m.ToolCalls) > 0 {
			names := make([]string, len(m.ToolCalls))
			for i, tc := range m.ToolCalls {
				names[i] = tc.Name
			}
			line += " [called " + strings.Join(names, ", ") + "]"
		}
		fmt.Fprintf(&b, "- %s: %s\n", m.Role, line)
	}
	return b.String(), nil
}
