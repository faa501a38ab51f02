package model_test

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/model"
)

// A script answers the Nth model turn with its Nth decision, and rehearses
// a transient failure before it.
func ExampleParseScript() {
	script, err := model.ParseScript("example.jsonl", []byte(`{"fail": ["transient"], "text": "Nothing to change."}`+"\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := model.Request{Thread: "t1", Turn: 1}
	_, err = script.Turn(context.Background(), req)
	fmt.Println(model.IsTransient(err))
	d, _ := script.Turn(context.Background(), req)
	fmt.Println(d.Text)

	_, err = model.ParseScript("bad.jsonl", []byte(`{"txt": "typo"}`))
	fmt.Println(err != nil)
	// Output:
	// true
	// Nothing to change.
	// true
}
