package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// treeTurns is the model turns of one BenchmarkCLIRunTree session: all
// but the last call a tool, writes and commands taking turns.
const treeTurns = 11

// BenchmarkCLIRunTree is a session as a person runs one: `harness run`,
// a new process, in a git repository of 10,000 committed files and in
// one of 10, alternating op by op. Each session is treeTurns model turns
// from a script: every other turn writes a file (its content new in each
// session), the others run a command of their own (`true N`, in the
// sandbox where the machine has one), all approved by --approve all; the
// last turn ends the thread. Each repository has had one session before
// the timer starts (untimed), as a workspace in use has. ratio is the
// 10,000-file session's per-turn time over the 10-file one's (aim: ≤ 1.5,
// as BenchmarkStockSession's in-process sessions); ratio-min/-med/-max
// are the spread over the pairs run back to back. ms/turn includes the
// process's start, opening the store, the observer's first look through
// the stat cache, and the sandbox's launcher: what a person waits for.
func BenchmarkCLIRunTree(b *testing.B) {
	bin := builtHarness(b)
	small, big := gitTree(b, 10), gitTree(b, 10_000)
	// The stat cache keeps files only once they are older than the racy
	// window: a workspace in use is mostly older than that.
	time.Sleep(action.DefaultRacyWindow + 100*time.Millisecond)
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+b.TempDir())
	scripts := b.TempDir()
	session := func(dir string, n int) time.Duration {
		script := filepath.Join(scripts, fmt.Sprintf("s%d.jsonl", n))
		if _, err := os.Stat(script); err != nil {
			require.NoError(b, os.WriteFile(script, treeScript(n), 0o644))
		}
		cmd := exec.Command(bin, "run", "--model", "scripted:"+script, "--approve", "all", "--no-input", "-o", "json", "Tidy up")
		cmd.Dir, cmd.Env = dir, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		var res drive.State
		if jerr := json.Unmarshal(out.Bytes(), &res); err != nil || jerr != nil || res.Status != harness.StatusDone {
			b.Fatalf("harness run in %s: %v %v, status %q\nstdout: %s\nstderr: %s", dir, err, jerr, res.Status, out.String(), errb.String())
		}
		return d
	}
	session(small, 0)
	session(big, 0)
	var smallT, bigT time.Duration
	var ratios []float64
	n := 0
	for b.Loop() {
		n++
		s := session(small, n)
		g := session(big, n)
		smallT += s
		bigT += g
		ratios = append(ratios, float64(g)/float64(s))
	}
	slices.Sort(ratios)
	per := func(d time.Duration) float64 {
		return float64(d) / float64(n*treeTurns) / float64(time.Millisecond)
	}
	b.ReportMetric(per(smallT), "ms/turn@10")
	b.ReportMetric(per(bigT), "ms/turn@10k")
	b.ReportMetric(float64(bigT)/float64(smallT), "ratio")
	b.ReportMetric(ratios[0], "ratio-min")
	b.ReportMetric(ratios[len(ratios)/2], "ratio-med")
	b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
}

// treeScript is session n's model script: treeTurns-1 tool calls, writes
// and commands taking turns, none the same as another (a call repeated
// three times in a row is put to a person), then the end.
func treeScript(n int) []byte {
	type call struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Args string `json:"args"`
	}
	type turn struct {
		Text      string `json:"text"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for i := 1; i < treeTurns; i++ {
		c := call{ID: fmt.Sprintf("c%d", i), Name: "run_command", Args: fmt.Sprintf(`{"command":"true %d"}`, i)}
		if i%2 == 1 {
			args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("notes/n%d.txt", i), "content": fmt.Sprintf("session %d, step %d\n", n, i)})
			c = call{ID: fmt.Sprintf("c%d", i), Name: "write_file", Args: string(args)}
		}
		_ = enc.Encode(turn{Text: fmt.Sprintf("step %d", i), ToolCalls: []call{c}})
	}
	_ = enc.Encode(turn{Text: "done"})
	return out.Bytes()
}

// gitTree is a git repository of n committed files (in 10×10 directories
// past 100), each 500 to 3,500 bytes from a fixed seed.
func gitTree(b *testing.B, n int) string {
	b.Helper()
	root := harnesstest.Tree(b, n, 11)
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "tree"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return root
}
