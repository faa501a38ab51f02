package thread_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// childEnv makes the test binary act as a child process for the crash and
// lock tests instead of running tests: "append:DIR" or "hold:DIR".
const childEnv = "HARNESS_THREAD_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	code := m.Run()
	if err := closeReadFixture(); err != nil {
		fmt.Fprintln(os.Stderr, "benchmark fixture:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func runChild(mode string) int {
	what, dir, _ := strings.Cut(mode, ":")
	if what == "diskfull" {
		return diskFullChild(dir)
	}
	s, err := thread.OpenPebble(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	switch what {
	case "hold":
		// Hold the store open until the parent closes our stdin.
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 2
		}
		return 0
	case "append":
		if err := appendForever(s); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
		}
		return 3
	}
	fmt.Fprintln(os.Stderr, "child: unknown mode", mode)
	return 2
}

// appendForever appends batches of one to three facts to thread "crash" and
// prints the head seq of every acknowledged append, one line each, with one
// write to the unbuffered stdout, until it is killed. Every
// batch's facts share the cause "crash/FIRST/N" so the parent can check
// that batches were applied whole.
func appendForever(s *thread.PebbleStore) error {
	ctx := context.Background()
	var after uint64
	switch h, err := s.Head(ctx, "crash"); {
	case err == nil:
		after = h.Seq
	case !errors.Is(err, thread.ErrNotFound):
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), after))
	for {
		n := 1 + rng.IntN(3)
		cause := fmt.Sprintf("crash/%d/%d", after+1, n)
		drafts := make([]facts.Draft, n)
		for i := range drafts {
			d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: strings.Repeat("x", 1+rng.IntN(600))})
			if err != nil {
				return err
			}
			drafts[i] = d
		}
		h, err := s.Append(ctx, "crash", after, drafts...)
		if err != nil {
			return err
		}
		after = h.Seq
		if _, err := fmt.Fprintf(os.Stdout, "%d\n", h.Seq); err != nil {
			return err
		}
	}
}
