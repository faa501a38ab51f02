package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/openai"
)

// New opens a model on a local server; with model.WithStream its text
// prints as it arrives, and the decision comes when the turn is complete,
// with the exact bytes exchanged.
func ExampleNew() {
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

	m, err := openai.New("llama3.1", model.WithBaseURL(srv.URL+"/v1"),
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
