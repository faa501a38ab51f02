package model_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Open reads a spec as `harness run --model SPEC` gives it.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "run.jsonl")
	os.WriteFile(script, []byte(`{"text": "Nothing to change."}`+"\n"), 0o644)

	m, err := model.Open("scripted:" + script)
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := m.Turn(context.Background(), model.Request{Turn: 1})
	fmt.Println(d.Text)

	_, err = model.Open("gpt-4o-mini")
	fmt.Println(err)
	fmt.Println(errors.Is(err, model.ErrSpec))
	// Output:
	// Nothing to change.
	// model spec "gpt-4o-mini": bad model spec: no provider; want scripted:FILE, openai:MODEL or anthropic:MODEL
	// true
}

// WithStream prints a turn's text as it arrives; the decision comes when
// the turn is complete, with the exact bytes exchanged.
func ExampleWithStream() {
	// A server speaking the chat completions API, as Ollama does.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Hello", ", ", "world."} {
			io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3.1","choices":[{"index":0,"delta":{"content":"`+piece+`"},"finish_reason":null}]}`+"\n\n")
		}
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	m, err := model.Open("openai:llama3.1", model.WithBaseURL(srv.URL+"/v1"),
		model.WithStream(func(delta string) { fmt.Print(delta) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := m.Turn(context.Background(), model.Request{Turn: 1,
		Messages: []facts.Message{{Role: facts.RoleUser, Text: "Say hello."}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println()
	fmt.Printf("%q, %d tokens in, %d out, %d bytes kept\n", d.Text, d.Usage.InputTokens, d.Usage.OutputTokens, d.Exchange.Size())
	// Output:
	// Hello, world.
	// "Hello, world.", 9 tokens in, 3 out, 1558 bytes kept
}
