package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// Elicitation: harness declares form elicitation. A server that asks
// (elicitation/create) during a call of one of its tools puts the
// question to a person through the action's action.Elicit — the runtime
// records it in the thread as a question.asked every front end shows,
// and the person's answer (accept with the input, decline, cancel) is
// the response. What the server sends is bounded here (MaxElicitMessage,
// MaxElicitSchema) and recorded as the server's word; a front end escapes
// it. A server that asks outside a call, or where no person can be asked,
// or for a URL to open, is refused with an error.

// MaxElicitMessage and MaxElicitSchema bound what a server's question may
// hold, in bytes: past them it is refused.
const (
	MaxElicitMessage = 4 << 10
	MaxElicitSchema  = 16 << 10
)

// inflight is a call being made: while it runs, a server's question goes
// to the person its action may ask.
type inflight struct {
	ctx      context.Context
	actionID string
	ask      action.Elicit
	// pause stops the call's timeout while a person is asked; what it
	// returns starts it again.
	pause func() func()
	// sample runs a turn of the thread's model (sampling); nil where none
	// can be run. samples counts the call's sampling requests, sampling
	// those that run; ended is set once the call is no longer made
	// (guarded by calls.mu, as samples is).
	sample   action.Sample
	samples  int
	sampling sync.WaitGroup
	ended    bool
	// kept are the digests of the sessions kept for the call's questions
	// (see resumable), forgotten at its end (guarded by calls.mu).
	kept []string
}

// calls are the calls of one server being made.
type calls struct {
	mu  sync.Mutex // guards now
	now []*inflight
}

func (c *calls) add(f *inflight) func() {
	c.mu.Lock()
	c.now = append(c.now, f)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.now = slices.DeleteFunc(c.now, func(x *inflight) bool { return x == f })
		f.ended = true
		c.mu.Unlock()
		// A sampling turn that runs is recorded before the call's end.
		f.sampling.Wait()
	}
}

// startSample counts a sampling request of the call f, and reports
// whether it may run: the call is still made and has taken fewer than
// limit. One that may is added to f.sampling; the caller marks it done.
func (c *calls) startSample(f *inflight, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.ended || f.samples >= limit {
		return false
	}
	f.samples++
	f.sampling.Add(1)
	return true
}

// only is the one call being made, or why there is not one.
func (c *calls) only() (*inflight, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch len(c.now) {
	case 0:
		return nil, "harness asks a person only during a call of one of your tools, and none is being made"
	case 1:
		return c.now[0], ""
	}
	return nil, fmt.Sprintf("%d calls of your tools are being made at once, and harness cannot tell which one asks", len(c.now))
}

// secretWords are what makes a property of a requested schema look like a
// secret.
// A word is matched apart from letters around it, so that "pin_code",
// "user_pin" and "PIN" count ("_" and digits do not join words here).
var secretWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)pass(word|phrase|wd|code)?|pwd|secret|token|api[ _-]?key|(private|priv|ssh|access|signing|encryption)[ _-]?key|credential|(^|[^a-z])(pin|otp|cvv|cvc|ssn|iban|auth|bearer|cookie|session|mnemonic)([^a-z]|$)|2fa|mfa|social security|card[ _-]?number|seed[ _-]?phrase|recovery[ _-]?(code|phrase)`)
})

// elicit is the client's elicitation handler.
func (s *conn) elicit(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	q, err := question(req.Params)
	if err != nil {
		return nil, err
	}
	call, why := s.calls.only()
	if call == nil {
		return refuse("%s", why)
	}
	if call.ask == nil {
		return refuse("nobody can be asked where this call runs")
	}
	q.Elicit.ActionID, q.Elicit.Server = call.actionID, s.name
	q.Elicit.Resume = s.resumable(call, req.Params.Message)
	ctx, cancel := context.WithCancel(call.ctx)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	resume := call.pause()
	ans, err := call.ask(ctx, q)
	resume()
	if err != nil {
		return nil, err
	}
	return elicitResult(ans)
}

// refuse is the JSON-RPC error refusing a server's question.
func refuse(format string, args ...any) (*sdk.ElicitResult, error) {
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// question is the question a server's elicitation/create puts, its
// action and server not yet named; a refusal (a JSON-RPC error) when the
// request may not be put to a person.
func question(p *sdk.ElicitParams) (facts.QuestionAsked, error) {
	if p == nil {
		_, err := refuse("no parameters")
		return facts.QuestionAsked{}, err
	}
	if p.Mode == "url" || p.URL != "" {
		_, err := refuse("harness does not open URLs a server asks for (URL elicitation)")
		return facts.QuestionAsked{}, err
	}
	if len(p.Message) > MaxElicitMessage || !utf8.ValidString(p.Message) {
		_, err := refuse("the message is over %d bytes or not UTF-8", MaxElicitMessage)
		return facts.QuestionAsked{}, err
	}
	var schema facts.RawJSON
	if p.RequestedSchema != nil {
		raw, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			_, err := refuse("the requested schema cannot be encoded: %v", err)
			return facts.QuestionAsked{}, err
		}
		if len(raw) > MaxElicitSchema {
			_, err := refuse("the requested schema is over %d bytes", MaxElicitSchema)
			return facts.QuestionAsked{}, err
		}
		schema = canonical(raw)
	}
	return facts.QuestionAsked{Text: p.Message, Elicit: &facts.Elicit{Schema: schema, Sensitive: sensitive(schema)}}, nil
}

// elicitResult is the response a person's answer makes.
func elicitResult(ans facts.QuestionAnswered) (*sdk.ElicitResult, error) {
	if ans.Elicited == nil {
		return refuse("the person's answer is not an answer to a form")
	}
	res := &sdk.ElicitResult{Action: string(ans.Elicited.Action)}
	if ans.Elicited.Action == facts.ElicitAccept {
		res.Content = map[string]any{}
		if len(ans.Elicited.Content) > 0 {
			if err := json.Unmarshal(ans.Elicited.Content, &res.Content); err != nil {
				return nil, fmt.Errorf("the recorded answer %s: %w", ans.RequestID, err)
			}
		}
	}
	return res, nil
}

// sensitive names the properties of schema that look like secrets, in
// order.
func sensitive(schema facts.RawJSON) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []string
	secret := secretWords()
	for name, raw := range s.Properties {
		var p struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			Format      string `json:"format"`
			WriteOnly   bool   `json:"writeOnly"`
		}
		_ = json.Unmarshal(raw, &p)
		if secret.MatchString(name) || secret.MatchString(p.Title) || secret.MatchString(p.Description) || p.Format == "password" || p.WriteOnly {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
