package drive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// DraftOf parses raw as the payload of a fact of kind posted from outside,
// strictly: one JSON object of the kind's fields, no others, valid for the
// kind. An answer, a budget or a policy is by who: a "by" that names
// someone else is refused, and one left out is who. A denial that says
// nothing of what follows lets the model go on (facts.DenyContinue), as
// a deny does. It returns the request the payload answers, if any.
//
// Its errors begin with the kind, so that a front end can say where the
// payload came from before them ("--data for " + the error).
func DraftOf(kind facts.Kind, raw []byte, who string) (d facts.Draft, request string, err error) {
	t, ok := facts.Registered(kind)
	if !ok {
		return facts.Draft{}, "", fmt.Errorf("%s: the kind has no payload type", kind)
	}
	v := reflect.New(t)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return facts.Draft{}, "", fmt.Errorf("%s is not a payload of that kind: %v; e.g. %s", kind, err, Example(kind))
	}
	if dec.More() {
		return facts.Draft{}, "", fmt.Errorf("%s: more than one JSON value", kind)
	}
	by := func(given string) (string, error) {
		if given != "" && given != who {
			return "", fmt.Errorf("%s: \"by\": %q names someone else; an answer records who gives it (%s): leave \"by\" out", kind, given, who)
		}
		return who, nil
	}
	switch p := v.Interface().(type) {
	case *facts.ConfirmationAnswered:
		p.By, err = by(p.By)
		request = p.RequestID
		if !p.Approved && p.Then == "" {
			p.Then = facts.DenyContinue // the model is told, as deny does
		}
	case *facts.BudgetRaised:
		p.By, err = by(p.By)
	case *facts.BudgetSet:
		p.By, err = by(p.By)
	case *facts.PolicySet:
		p.By, err = by(p.By)
	case *facts.QuestionAnswered:
		p.By, err = by(p.By)
		request = p.RequestID
	case *facts.EffectReconciled:
		p.By, err = by(p.By)
		request = p.ActionID
	case *facts.UserMessage:
		if strings.TrimSpace(p.Text) == "" {
			return facts.Draft{}, "", fmt.Errorf("%s: the text is empty; say something, e.g. %s", kind, Example(kind))
		}
	}
	if err != nil {
		return facts.Draft{}, "", err
	}
	d, err = facts.NewDraft(kind, "", v.Elem().Interface())
	if err != nil {
		return facts.Draft{}, "", fmt.Errorf("%s: %w; e.g. %s", kind, err, Example(kind))
	}
	return d, request, nil
}

// Example is a payload of kind, as a shell word, for a person to copy;
// "{}" for a kind it has none of.
func Example(kind facts.Kind) string {
	switch kind {
	case facts.KindConfirmationAnswered:
		return `'{"request_id": "1-call_1", "approved": true, "reason": "looks right"}'`
	case facts.KindQuestionAnswered:
		return `'{"request_id": "q-1", "text": "cache.toml"}'`
	case facts.KindEffectReconciled:
		return `'{"action_id": "1-call_1", "decision": "accept", "note": "checked by hand"}' (decision: accept, retry or abandon)`
	case facts.KindUserMessage:
		return `'{"text": "Also update the docs"}'`
	case facts.KindPolicySet:
		return `'{"approve": "writes", "allow": ["run_command:go test *"], "deny": ["write_file:.github/*"]}'`
	case facts.KindBudgetSet:
		return `'{"limit": {"usd": 5, "tokens": 2000000}}'`
	case facts.KindBudgetRaised:
		return `'{"add": {"usd": 2}}'`
	}
	return "{}"
}
