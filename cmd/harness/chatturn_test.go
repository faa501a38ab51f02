package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// chatRequest reads a request of an OpenAI-compatible chat completion, as
// the test servers of reruns take it: its task (the first user message)
// and the turn it asks for (one more than its assistant messages).
func chatRequest(r *http.Request) (task string, turn int, err error) {
	b, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return "", 0, err
	}
	turn = 1
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			if task == "" {
				task, _ = m.Content.(string)
			}
		case "assistant":
			turn++
		}
	}
	return task, turn, nil
}

// writeChatTurn answers a chat completion with the tool call call (one
// call's JSON), or with "Done." when call is "".
func writeChatTurn(w http.ResponseWriter, call string) {
	msg, finish := `{"role":"assistant","content":"Done."}`, "stop"
	if call != "" {
		msg, finish = `{"role":"assistant","content":null,"tool_calls":[`+call+`]}`, "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050}}`, msg, finish)
}
