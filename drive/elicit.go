package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// ElicitField is one input of the form an MCP server asked for (its
// requested schema's property), as a front end shows it. Everything but
// Name's use as a key is the server's word: escape it where shown.
type ElicitField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is string, number, integer or boolean.
	Type     string   `json:"type"`
	Required bool     `json:"required,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	// Secret says the field looks like a secret (facts.Elicit.Sensitive).
	Secret bool `json:"secret,omitempty"`
	// Default is the value the server offers (its schema's "default",
	// SEP-1034), as text typed into the field would give it: a field
	// left empty takes it. Only a default of the field's type is kept
	// (one of its choices, for a field with some; a string of at most
	// MaxElicitDefault bytes with no control or bidi-formatting
	// characters); any other is left out.
	Default string `json:"default,omitempty"`
}

// MaxElicitDefault bounds a string field's default, in bytes.
const MaxElicitDefault = facts.MaxElicitDefault

// MaxElicitFields bounds the fields a front end is given of one form.
const MaxElicitFields = facts.MaxElicitFields

// ElicitFields reads the fields of the form e asks for, in name order (at
// most MaxElicitFields), as facts.ElicitInputs reads them. A schema that
// does not read gives none.
func ElicitFields(e *facts.Elicit) []ElicitField {
	if e == nil {
		return nil
	}
	var out []ElicitField
	for _, in := range facts.ElicitInputs(e.Schema) {
		out = append(out, ElicitField{Name: in.Name, Title: in.Title, Description: in.Description, Type: in.Type,
			Required: in.Required, Enum: in.Choices, Secret: slices.Contains(e.Sensitive, in.Name), Default: in.Default})
	}
	return out
}

// withDefaults is the input content with each field the server gave a
// default that content leaves out set to it: what the server is sent
// when a person accepts a field's default. Content that is not an
// object is left as it is (the schema check refuses it).
func withDefaults(e *facts.Elicit, content json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(content, &m) != nil || m == nil {
		return content, nil
	}
	added := false
	for _, f := range ElicitFields(e) {
		if _, ok := m[f.Name]; ok || f.Default == "" {
			continue
		}
		x, _, err := f.value(f.Default)
		if err != nil {
			continue // defaultOf kept only values of the field's type
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		m[f.Name], added = b, true
	}
	if !added {
		return content, nil
	}
	return json.Marshal(m)
}

// elicitContent is the input a form's fields give, typed as the schema
// says (see ElicitField.Value); an empty field is left out (and then
// takes its default, see withDefaults).
func elicitContent(e *facts.Elicit, fields map[string]string) (json.RawMessage, error) {
	byName := map[string]ElicitField{}
	for _, f := range ElicitFields(e) {
		byName[f.Name] = f
	}
	out := map[string]any{}
	for name, v := range fields {
		f, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("%w: the server's form has no field %q", ErrBadReply, name)
		}
		x, set, err := f.value(v)
		if err != nil {
			return nil, err
		}
		if set {
			out[name] = x
		}
	}
	return json.Marshal(out)
}

// Check says whether v, typed into the field, is input the field takes:
// of its type, one of its choices when it has some, given when it is
// required. It is the check a form's answer goes through (Reply with
// Fields), field by field, for a front end that asks one at a time; the
// whole input is checked against the server's schema when posted.
func (f ElicitField) Check(v string) error {
	x, set, err := f.value(v)
	if err != nil {
		return err
	}
	if !set {
		if f.Required {
			return fmt.Errorf("%w: field %q is required", ErrBadReply, f.Name)
		}
		return nil
	}
	if len(f.Enum) > 0 && !slices.Contains(f.Enum, fmt.Sprint(x)) {
		return fmt.Errorf("%w: field %q takes one of %s, not %q", ErrBadReply, f.Name, strings.Join(f.Enum, ", "), v)
	}
	return nil
}

// value is the input v typed into the field gives, typed as the schema
// says: a number, an integer or a boolean ("true", "on", "yes", "1", or
// false) from its text; set is false for an empty field (but a boolean).
func (f ElicitField) value(v string) (x any, set bool, err error) {
	switch t := f.Type; {
	case v == "" && t != "boolean":
		return nil, false, nil
	case t == "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, false, fmt.Errorf("%w: field %q wants a number, not %q", ErrBadReply, f.Name, v)
		}
		return n, true, nil
	case t == "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%w: field %q wants an integer, not %q", ErrBadReply, f.Name, v)
		}
		return n, true, nil
	case t == "boolean":
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "on", "yes", "1":
			return true, true, nil
		}
		return false, true, nil
	}
	return v, true, nil
}

// ErrNoLongerAsked: the MCP server's question a person was being asked is
// no longer asked, and not answered either: its action ended (the call
// timed out, the server went away, the thread stopped).
var ErrNoLongerAsked = errors.New("the server's question is no longer asked")

// AskedPending is the wait the question e (an EventAsked) puts its thread
// on, as Reply.Draft and AnswerPending take it: a reply to it is checked
// as the API checks one (the input against the server's schema).
func AskedPending(e Event) Pending {
	return Pending{Wait: fold.Wait{Kind: fold.WaitQuestion, RequestID: e.Request, Summary: e.Text}, Elicit: e.Elicit}
}

// WatchAsked is WatchAnswer for an MCP server's question p, asked of the
// thread th while its action runs: the context it returns is cancelled
// too once the question is no longer asked, with cause ErrNoLongerAsked.
// done ends the watch and returns what ended the wait: an *Elsewhere, an
// error wrapping ErrNoLongerAsked, or nil.
func WatchAsked(ctx context.Context, th *harness.Thread, p Pending) (watched context.Context, done func() error, err error) {
	wctx, wdone, err := WatchAnswer(ctx, th, p, nil)
	if err != nil {
		return nil, nil, err
	}
	gctx, cancel := context.WithCancelCause(wctx)
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(answerPoll)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-gctx.Done():
				return
			case <-tick.C:
			}
			st, err := Inspect(gctx, th)
			if err != nil {
				continue // looked at again
			}
			if !slices.ContainsFunc(st.Waits, func(w Pending) bool {
				return w.Thread == "" && w.Kind == fold.WaitQuestion && w.RequestID == p.RequestID
			}) {
				cancel(fmt.Errorf("%w: %s of %s", ErrNoLongerAsked, p.RequestID, th.ID()))
				return
			}
		}
	}()
	return gctx, func() error {
		close(stop)
		<-ended
		if e := wdone(); e != nil {
			cancel(nil)
			return e
		}
		err := context.Cause(gctx)
		cancel(nil)
		// Gone from the waits, or the watch ended (ctx): answered
		// elsewhere, as the log says, in the moment before the watch of
		// answers saw it, or not.
		if _, again, werr := WatchAnswer(context.WithoutCancel(ctx), th, p, nil); werr == nil {
			if e := again(); e != nil {
				return e
			}
		}
		if !errors.Is(err, ErrNoLongerAsked) {
			return nil
		}
		return err
	}, nil
}
