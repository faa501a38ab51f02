package drive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// MaxPrompt bounds a prompt (or message) read from a reader.
const MaxPrompt = 1 << 20

// ReadPrompt is the prompt of a command that starts or continues a
// thread: args joined by spaces or, when the one argument is "-", what r
// holds (at most MaxPrompt), its trailing line feeds dropped. An empty
// prompt, or one over MaxPrompt, is ErrBadPrompt.
func ReadPrompt(args []string, r io.Reader) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(r, MaxPrompt+1))
		if err != nil {
			return "", fmt.Errorf("read the prompt from stdin: %w", err)
		}
		if len(b) > MaxPrompt {
			return "", fmt.Errorf("%w: the prompt on stdin is over 1 MiB", ErrBadPrompt)
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", fmt.Errorf("%w: the prompt on stdin is empty", ErrBadPrompt)
		}
		return strings.TrimRight(string(b), "\n"), nil
	}
	prompt := strings.Join(args, " ")
	if strings.TrimSpace(prompt) == "" {
		return "", fmt.Errorf("%w: the prompt is empty", ErrBadPrompt)
	}
	return prompt, nil
}

// MessageKey is the idempotency key of a message written to a thread
// whose head is seq: the same message at the same point is posted once.
func MessageKey(seq uint64, msg string) string {
	sum := sha256.Sum256([]byte(msg))
	return fmt.Sprintf("message-%d-%s", seq, hex.EncodeToString(sum[:6]))
}

// MaxOutputSchema bounds the size of an output schema file.
const MaxOutputSchema = 1 << 20

// ReadOutputSchema reads the output schema file path (at most
// MaxOutputSchema bytes), for OutputSchema.
func ReadOutputSchema(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxOutputSchema+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxOutputSchema {
		return nil, fmt.Errorf("%s: over 1 MiB", path)
	}
	return b, nil
}

// PostMessage posts text to th as the user's message under key, or with
// key "" under the key of the same message at th's head (MessageKey):
// the same message at the same point is posted once.
func PostMessage(ctx context.Context, th *harness.Thread, text, key string) (harness.Posted, error) {
	d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: text})
	if err != nil {
		return harness.Posted{}, err
	}
	if key == "" {
		head, err := th.Runtime().Store.Head(ctx, th.ID())
		if err != nil {
			return harness.Posted{}, err
		}
		key = MessageKey(head.Seq, text)
	}
	return PostAnswer(ctx, th, d, key)
}
