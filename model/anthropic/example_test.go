package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/anthropic"
)

// New opens a model on the messages API (here a stand-in server, as a
// proxy holding the key would be); with model.WithStream its text prints
// as it arrives, and the decision comes at message_stop.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n")
		io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for _, piece := range []string{"Hello", ", ", "world."} {
			io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+piece+"\"}}\n\n")
		}
		io.WriteString(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n")
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()

	m, err := anthropic.New("claude-x", model.WithBaseURL(srv.URL), model.WithAPIKey(""),
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
	fmt.Printf("%q, %d tokens in, %d out\n", d.Text, d.Usage.InputTokens, d.Usage.OutputTokens)
	// Output:
	// Hello, world.
	// "Hello, world.", 9 tokens in, 3 out
}
