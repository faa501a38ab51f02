package facts_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// A transition returns drafts; the store turns them into facts; a fold
// decodes the payloads it needs.
func ExampleNewDraft() {
	d, err := facts.NewDraft(facts.KindQuestionAnswered, facts.IngressCause("answer-17"),
		facts.QuestionAnswered{RequestID: "q1", Text: "use the main branch", By: "ana"})
	if err != nil {
		panic(err)
	}

	// What a store returns after appending d as the thread's first fact.
	f := facts.Fact{Thread: "fix-login", Seq: 1, Kind: d.Kind, Cause: d.Cause,
		At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Data: d.Data}

	answer, err := facts.Decode[facts.QuestionAnswered](f)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Kind, f.Cause, facts.IsIngress(f.Cause))
	fmt.Printf("%s answered %s: %q\n", answer.By, answer.RequestID, answer.Text)
	// Output:
	// question.answered ingress/answer-17 true
	// ana answered q1: "use the main branch"
}

func ExampleWriteJSON() {
	d, _ := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("k1"), facts.UserMessage{Text: "fix the login bug"})
	f := facts.Fact{Thread: "fix-login", Seq: 1, Kind: d.Kind, Cause: d.Cause,
		At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Data: d.Data}
	if err := facts.WriteJSON(os.Stdout, f); err != nil {
		panic(err)
	}
	// Output:
	// {"thread":"fix-login","seq":1,"kind":"user.message","cause":"ingress/k1","at":"2025-01-02T03:04:05Z","data":{"text":"fix the login bug"},"prev":"0000000000000000000000000000000000000000000000000000000000000000","hash":"11705b7d6d6e97eaa1f9fa07f4d75f7d816e55d54af7e98e610cab593f3119a8"}
}

func ExampleParseJSON() {
	log := `{"thread":"fix-login","seq":1,"kind":"user.message","cause":"ingress/k1","at":"2025-01-02T03:04:05Z","data":{"text":"fix the login bug"},"prev":"0000000000000000000000000000000000000000000000000000000000000000","hash":"11705b7d6d6e97eaa1f9fa07f4d75f7d816e55d54af7e98e610cab593f3119a8"}
2025/01/02 03:04:06 worker started
`
	_, err := facts.ParseJSON(strings.NewReader(log))
	var perr *facts.ParseError
	if errors.As(err, &perr) {
		fmt.Println("bad line:", perr.Line)
	}
	fmt.Println(err)
	// Output:
	// bad line: 2
	// line 2: invalid fact: not a JSON object: "2025/01/02 03:04:06 worker started"
}

// DeployFinished is the payload of an application's own kind.
type DeployFinished struct {
	Service string `msgpack:"service" json:"service"`
	Version string `msgpack:"version" json:"version"`
}

func ExampleRegister() {
	facts.Register[DeployFinished]("example.deploy_finished")

	d, err := facts.NewDraft("example.deploy_finished", "deploy/api/42", DeployFinished{"api", "v42"})
	if err != nil {
		panic(err)
	}
	fmt.Println(facts.CheckPayload(d.Kind, d.Data))

	_, err = facts.NewDraft("example.deploy_finished", "deploy/api/43", facts.UserMessage{Text: "hi"})
	fmt.Println(errors.Is(err, facts.ErrPayload))
	// Output:
	// <nil>
	// true
}
