package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// Sampling: an MCP server that the settings allow a model turn asks for
// one (sampling/createMessage) during a call of one of its tools; its
// client calls the action.Sample of the call's context, which is a
// sampler's. The turn runs through the thread's model with no tools,
// bounded by what the server's client granted; before it runs, the
// thread's budget must cover it reckoned at its most — every byte of
// input a token, and all the output it may write — so that a sampling
// turn never takes the thread or its tree past a bound; it is recorded
// as model.sampled under the action's cause (scheduler.SampleCause),
// whose tokens and cost the budget counts. One turn of an action runs at
// a time; an action takes at most maxSamples. The thread's conversation
// is never sent: only what the server sent.

// maxSamples bounds the sampling turns one action's run may take; a
// server's settings bound each call lower (mcp.Server.SamplingPerCall).
const maxSamples = 100

// sampleOverhead is the tokens a message is reckoned to add to its text.
const sampleOverhead = 16

// recordSampleWithin bounds recording a sampling turn that ran after the
// action's context ended: its tokens are spent, and are recorded.
const recordSampleWithin = 10 * time.Second

// sampling returns what makes the sampler of the action the transition
// key runs in thread st.
func (rt *Runtime) sampling(st *state, key string) func(cfg Config, svc Services) *sampler {
	return func(cfg Config, svc Services) *sampler {
		sm := &sampler{rt: rt, id: st.id, key: key, cfg: cfg, svc: svc, turn: make(chan struct{}, 1)}
		// Read here, on the goroutine that runs the transition, never
		// on the server's: the fold is this goroutine's.
		if b := budgetOf(st.fold); b != nil {
			v := b.View()
			sm.base = sampleBase{own: facts.Spend{USD: v.USD, Tokens: v.Tokens}, tree: v.Tree, maxTokens: b.maxTokens,
				turns: b.sampled}
		}
		return sm
	}
}

// sampleBase is what the thread's budget had counted when the action
// began: what the thread (with its children) spent, the tree's bounds,
// the thread's own bound in tokens, the sampling turns of the thread.
type sampleBase struct {
	own       facts.Spend
	tree      TreeBudgetView
	maxTokens int64
	turns     int
}

// sampler runs the sampling turns of one action's run.
type sampler struct {
	rt   *Runtime
	id   string // the thread
	key  string // the transition that runs the action
	cfg  Config
	svc  Services
	base sampleBase
	// turn is held while a turn runs: one at a time.
	turn chan struct{}
	// mu guards n, spent, closed and running's adds.
	mu      sync.Mutex
	n       int
	spent   facts.Spend // what the turns of this run spent
	closed  bool
	running sync.WaitGroup
}

// close waits for a turn that runs, and refuses any after: the action
// has ended, and its record follows.
func (sm *sampler) close() {
	sm.mu.Lock()
	sm.closed = true
	sm.mu.Unlock()
	sm.running.Wait()
}

// sample is the action.Sample of the action's run.
func (sm *sampler) sample(ctx context.Context, r action.SampleRequest) (action.SampleResult, error) {
	refuse := func(format string, args ...any) (action.SampleResult, error) {
		return action.SampleResult{}, fmt.Errorf("sample in %s: %s: %w", sm.id, fmt.Sprintf(format, args...), ErrSampleRefused)
	}
	if scheduler.SampleCause(r.ActionID, 1) != sm.key+"/sample/1" {
		return refuse("action %s does not run under %s", r.ActionID, sm.key)
	}
	sm.mu.Lock()
	if sm.closed {
		sm.mu.Unlock()
		return refuse("action %s has ended", r.ActionID)
	}
	sm.running.Add(1)
	sm.mu.Unlock()
	defer sm.running.Done()
	select {
	case sm.turn <- struct{}{}:
		defer func() { <-sm.turn }()
	case <-ctx.Done():
		return action.SampleResult{}, ctx.Err()
	}
	sm.mu.Lock()
	if sm.n >= maxSamples {
		sm.mu.Unlock()
		return refuse("action %s has taken %d sampling turns, all it may", r.ActionID, maxSamples)
	}
	sm.n++
	n := sm.n
	spent := sm.spent
	sm.mu.Unlock()

	msgs := make([]facts.Message, len(r.Messages))
	size := int64(len(r.System))
	for i, m := range r.Messages {
		msgs[i] = facts.Message{Role: m.Role, Text: m.Text}
		size += int64(len(m.Text))
	}
	if len(r.System) > facts.MaxSampledSystem {
		return refuse("a system prompt of %d bytes, over %d", len(r.System), facts.MaxSampledSystem)
	}
	if r.MaxTokens <= 0 {
		return refuse("no bound on the answer's tokens")
	}
	est := sm.estimate(size, len(msgs), r.MaxTokens)
	if why := sm.cover(spent, est); why != "" {
		return refuse("%s", why)
	}
	digest, err := messagesDigest(msgs)
	if err != nil {
		return action.SampleResult{}, fmt.Errorf("sample in %s: %w", sm.id, err)
	}
	rec := facts.ModelSampled{ActionID: r.ActionID, Server: r.Server, N: n, Turn: sm.base.turns + n, Messages: len(msgs),
		Bytes: size - int64(len(r.System)), Digest: digest, System: r.System, AskedMaxTokens: r.AskedMaxTokens,
		MaxTokens: r.MaxTokens, IncludeContext: r.IncludeContext}

	m, err := modelOf(sm.cfg, sm.svc)
	if err != nil {
		return action.SampleResult{}, fmt.Errorf("sample in %s: %w", sm.id, err)
	}
	// The turn is the server's, not the thread's conversation: nothing
	// of the context's (a front end's progress) goes with it but its end.
	mctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	d, err := m.Turn(mctx, model.Request{Thread: sm.id + ".sample", Turn: rec.Turn, System: r.System, Messages: msgs, MaxTokens: r.MaxTokens})
	if err == nil {
		err = d.Usage.Validate()
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return action.SampleResult{}, ctx.Err() // cancelled before an answer: nothing spent to record
		}
		rec.Class, _ = model.Classify(err)
		if rec.Class == "" {
			rec.Class = facts.ClassBusiness
		}
		rec.Error = err.Error()
		if rerr := sm.record(ctx, rec); rerr != nil {
			return action.SampleResult{}, rerr
		}
		return action.SampleResult{}, fmt.Errorf("sample in %s: the model: %w", sm.id, err)
	}
	rec.Text, rec.Usage, rec.StopReason = d.Text, d.Usage, d.StopReason
	rec.Dropped = len(d.ToolCalls)
	if d.Question != nil {
		rec.Dropped++
	}
	rec.Cost, rec.Model = priced(sm.cfg, sm.cfg.ModelName, d)
	if err := sm.record(ctx, rec); err != nil {
		return action.SampleResult{}, err
	}
	sm.mu.Lock()
	sm.spent.Tokens += rec.Spend().Tokens
	sm.spent.USD += rec.Spend().USD
	sm.mu.Unlock()
	name := rec.Model
	if name == "" {
		name = sm.cfg.ModelName
	}
	return action.SampleResult{Text: d.Text, Model: name, Cut: d.Cut != nil}, nil
}

// estimate is the most a sampling turn may spend: every byte of its input
// a token (no tokenizer makes more), each message's framing, and all the
// output it may write, at the model's prices when it has them (USD 0 and
// priced false when not).
func (sm *sampler) estimate(size int64, messages int, maxTokens int64) sampleEstimate {
	in := size + sampleOverhead*int64(messages+1)
	e := sampleEstimate{Spend: facts.Spend{Tokens: in + maxTokens}}
	if sm.cfg.Prices != nil {
		if pr, ok := sm.cfg.Prices.Lookup(sm.cfg.ModelName); ok {
			e.priced = true
			e.USD = (float64(in)*pr.Input + float64(maxTokens)*pr.Output) / 1e6
		}
	}
	return e
}

type sampleEstimate struct {
	facts.Spend
	priced bool
}

// cover says why the budget cannot cover a sampling turn reckoned at est,
// after the turns of this run spent spent, or "" when it can.
func (sm *sampler) cover(spent facts.Spend, est sampleEstimate) string {
	b := sm.base
	tokens := b.own.Tokens + spent.Tokens
	if b.maxTokens > 0 && tokens+est.Tokens > b.maxTokens {
		return fmt.Sprintf("the thread's budget of %d tokens cannot cover a sampling turn of up to %d tokens (%d spent)", b.maxTokens, est.Tokens, tokens)
	}
	v := b.tree
	usd := b.own.USD + spent.USD + v.Elsewhere.USD
	tokens += v.Elsewhere.Tokens
	switch {
	case v.Limit.USD > 0 && v.Limit.Tokens == 0 && !est.priced:
		return fmt.Sprintf("the tree's budget of $%.4f cannot count a sampling turn: the model has no price", v.Limit.USD)
	case v.Limit.USD > 0 && usd+est.USD > v.Limit.USD+coverSlack:
		return fmt.Sprintf("the tree's budget of $%.4f cannot cover a sampling turn of up to $%.4f ($%.4f spent)", v.Limit.USD, est.USD, usd)
	case v.Limit.Tokens > 0 && tokens+est.Tokens > v.Limit.Tokens:
		return fmt.Sprintf("the tree's budget of %d tokens cannot cover a sampling turn of up to %d tokens (%d spent)", v.Limit.Tokens, est.Tokens, tokens)
	}
	return ""
}

// record appends the sampling turn under the action's cause. Its tokens
// are spent: it is recorded even when the action's context ended, within
// recordSampleWithin.
func (sm *sampler) record(ctx context.Context, rec facts.ModelSampled) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordSampleWithin)
	defer cancel()
	for {
		d, err := facts.NewDraft(facts.KindModelSampled, scheduler.SampleCause(rec.ActionID, rec.N), rec)
		if err != nil {
			return fmt.Errorf("sample in %s: %w", sm.id, err)
		}
		_, err = sm.rt.appendAtHead(ctx, sm.id, d)
		if errors.Is(err, thread.ErrDuplicateCause) && rec.N < maxSamples {
			rec.N++ // recorded before this process ran the action
			continue
		}
		if err != nil {
			return fmt.Errorf("sample in %s: record: %w", sm.id, err)
		}
		return nil
	}
}

// messagesDigest is the SHA-256 of msgs as JSON (roles and texts, in
// order).
func messagesDigest(msgs []facts.Message) (string, error) {
	type m struct {
		Role facts.Role `json:"role"`
		Text string     `json:"text"`
	}
	out := make([]m, len(msgs))
	for i, x := range msgs {
		out[i] = m{x.Role, x.Text}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
