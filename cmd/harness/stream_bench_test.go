package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkCLIStreamJSON runs `harness run` — a new process each — on a
// thread of about 1,000 facts (a scripted model reading a file in each
// of 250 turns, approved by policy), with -o stream-json and with the
// plain text output to a pipe, alternating op by op in one workspace.
// ratio is the stream's time over the plain run's (aim: ≤ 1.2).
func BenchmarkCLIStreamJSON(b *testing.B) {
	bin, dir, _, store := benchWorkspace(b)
	require.NoError(b, store.Close())
	const turns = 250
	var script strings.Builder
	for i := range turns {
		// Each call is another (its limit), so that the loop guard lets it run.
		fmt.Fprintf(&script, `{"text": "Reading it again (%d).", "tool_calls": [{"id": "c%d", "name": "read_file", "args": "{\"path\":\"a.txt\",\"limit\":%d}"}]}`+"\n", i, i, i+1)
	}
	script.WriteString(`{"text": "Done."}` + "\n")
	require.NoError(b, os.WriteFile(filepath.Join(dir, "script.jsonl"), []byte(script.String()), 0o644))
	require.NoError(b, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("ttl = 60\n"), 0o644))
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+b.TempDir(), "HARNESS_STORE=")
	run := func(output string) (time.Duration, int) {
		cmd := exec.Command(bin, "run", "-o", output, "--model", "scripted:script.jsonl", "--approve", "all",
			"--max-turns", "0", "--max-steps", "5000", "Read a.txt many times")
		cmd.Dir, cmd.Env = dir, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("run -o %s: %v\nstderr: %s", output, err, errb.String())
		}
		return d, strings.Count(out.String(), "\n")
	}
	_, lines := run("stream-json")
	require.Greater(b, lines, 1000, "a thread of over 1,000 facts, a line each")
	run("text")
	var streamT, plainT time.Duration
	for b.Loop() {
		d, _ := run("stream-json")
		streamT += d
		d, _ = run("text")
		plainT += d
	}
	n := float64(b.N)
	b.ReportMetric(float64(streamT)/n/float64(time.Millisecond), "ms/stream-json")
	b.ReportMetric(float64(plainT)/n/float64(time.Millisecond), "ms/text")
	b.ReportMetric(float64(streamT)/float64(plainT), "ratio")
}
