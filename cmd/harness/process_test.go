//go:build unix

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// These tests start the harness command as real processes: TestMain put it
// on $PATH.

func harnessBin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("harness")
	require.NoError(t, err, "TestMain puts harness on $PATH")
	return bin
}

// workspace makes a workspace holding cache.toml and the files given.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["cache.toml"] = "ttl_seconds = 60\n"
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// harnessIn runs the command in dir and returns its output and exit code.
func harnessIn(t testing.TB, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return harnessEnv(t, dir, []string{"NO_COLOR=1"}, args...)
}

const slowScript = `{"text": "Running the migration.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo 'ttl_seconds = 300' > cache.toml && echo ran >> runs.txt && sleep 3\"}"}]}
{"text": "Done."}
`

// TestKilledDuringATool: a process killed with SIGKILL while a tool runs
// leaves the action in doubt. Resume never runs it again: it reports it,
// records what it observes, and parks on reconcile; a person settles it.
func TestKilledDuringATool(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": slowScript})
	cmd := exec.Command(harnessBin(t), "run", "--model", "scripted:script.jsonl", "--approve", "all", "Migrate the cache")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out harnesstest.LockedBuffer // read while the process writes it
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())

	// The tool has started once runs.txt holds its line: action.started is in the
	// log, cache.toml has been written (the command writes it first), and
	// the command is sleeping.
	require.Eventually(t, func() bool {
		// The shell creates runs.txt before it writes the line: wait for
		// the line, or the kill can land between the two.
		b, err := os.ReadFile(filepath.Join(dir, "runs.txt"))
		return err == nil && string(b) == "ran\n"
	}, 30*time.Second, 10*time.Millisecond, "the tool never started:\n%s", &out)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())
	require.Contains(t, out.String(), "action.started         1-c started")
	require.NotContains(t, out.String(), "action.completed")

	stdout, stderr, code := harnessIn(t, dir, "threads")
	require.Zero(t, code, stderr)
	require.Regexp(t, `t1 +in doubt +1-c `, stdout)

	stdout, stderr, code = harnessIn(t, dir, "resume", "t1")
	require.Equal(t, exitParked, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "in doubt: action 1-c was in progress when its process died")
	require.Regexp(t, `action.interrupted +1-c in doubt: started, never completed \(the process died\) · observed cache.toml \(modified\), runs.txt \(added\) since it started`, stdout)
	require.Contains(t, stdout, "reconcile 1-c: run_command 1-c was in progress when the process died: did it happen?")
	require.Contains(t, stdout, `harness post t1 effect.reconciled --data '{"action_id": "1-c", "decision": "accept"}' --resume`)

	// Resuming again runs nothing: the command ran once, in the killed
	// process.
	_, _, code = harnessIn(t, dir, "resume", "t1")
	require.Equal(t, exitParked, code)
	runs, err := os.ReadFile(filepath.Join(dir, "runs.txt"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(runs), "the adapter is never invoked again by itself")

	stdout, stderr, code = harnessIn(t, dir, "effects", "--open")
	require.Zero(t, code, stderr)
	require.Regexp(t, `t1 +1-c +run_command +- +interrupted +- +cache.toml, runs.txt +open`, stdout)

	stdout, stderr, code = harnessIn(t, dir, "post", "t1", "effect.reconciled",
		"--data", `{"action_id": "1-c", "decision": "accept", "note": "the migration finished; checked by hand"}`, "--resume")
	require.Zero(t, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "effect.reconciled      1-c accept by "+(&app{getenv: os.Getenv}).whoami())
	require.Contains(t, stdout, "done: thread t1")

	stdout, stderr, code = harnessIn(t, dir, "replay", "t1", "--verify")
	require.Zero(t, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "verified:")
}

// terminal is a harness process on a pseudo-terminal.
type terminal struct {
	t   *testing.T
	f   *os.File
	cmd *exec.Cmd
	out harnesstest.LockedBuffer // what the terminal shows
	eof chan struct{}
}

func startTerminal(t *testing.T, dir string, env []string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(harnessBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	f, err := pty.Start(cmd)
	require.NoError(t, err)
	tm := &terminal{t: t, f: f, cmd: cmd, eof: make(chan struct{})}
	go func() {
		defer close(tm.eof)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.out.Write(buf[:n])
			if err != nil {
				return // io.EOF, or EIO once the process has exited
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = f.Close()
		<-tm.eof
	})
	return tm
}

func (tm *terminal) output() string { return tm.out.String() }

// expect waits until the output holds s.
func (tm *terminal) expect(s string) {
	tm.t.Helper()
	if !assert.Eventually(tm.t, func() bool { return strings.Contains(tm.output(), s) }, 30*time.Second, 10*time.Millisecond) {
		tm.t.Fatalf("waiting for %q; the terminal shows:\n%s", s, tm.output()) // as it is now, not as it was at the start
	}
}

// send types a line.
func (tm *terminal) send(line string) {
	tm.t.Helper()
	_, err := io.WriteString(tm.f, line+"\r")
	require.NoError(tm.t, err)
}

// exit waits for the process and returns its exit code.
func (tm *terminal) exit() int {
	tm.t.Helper()
	err := tm.cmd.Wait()
	<-tm.eof
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(tm.t, err)
	return 0
}

const writeScript = `{"text": "I'll set the TTL to 300.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done."}
`

// twoWrites writes cache.toml in two turns: an "always" at the first
// approves the second by the thread's policy.
const twoWrites = `{"text": "I'll set the TTL to 300.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "And to 400.", "tool_calls": [{"id": "call_2", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 400\\n\"}"}]}
{"text": "Done."}
`

// thePrompt is what the prompt asks of writeScript's call.
const thePrompt = "Approve 1-call_1 (write_file)? [y]es, [a]lways for this thread (write_file:cache.toml), always for this [p]roject (write_file:cache.toml), [n]o and tell the model, [d]eny and stop, [s]kip: "

// TestPromptOnATerminal drives the prompt through a pseudo-terminal: the
// answer typed is posted as the same fact harness post would append, and
// the thread goes on; with --no-input it parks as it would headless.
func TestPromptOnATerminal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		script  string
		env     []string
		args    []string
		typed   []string
		asked   []string // what is asked before each line typed after the first
		code    int
		want    []string
		not     []string
		content string
	}{
		{
			name:    "approve at the prompt",
			env:     []string{"NO_COLOR=1"},
			typed:   []string{"y"},
			want:    []string{"-ttl_seconds = 60", "+ttl_seconds = 300", "confirmation.answered  1-call_1 approved by ", "check.recorded         1-call_1 file_equals cache.toml: pass", "done: thread t1"},
			content: "ttl_seconds = 300\n",
		},
		{
			name:    "no, and tell the model: the thread goes on",
			env:     []string{"NO_COLOR=1"},
			typed:   []string{"n", "not today"},
			asked:   []string{"Reason (optional; the model is told"},
			want:    []string{`1-call_1 denied by `, `: "not today" (the model is told)`, "report denied", `model.turn             turn 2: "Done."`, "done: thread t1"},
			content: "ttl_seconds = 60\n",
		},
		{
			name:    "deny and stop: no model turn follows",
			env:     []string{"NO_COLOR=1"},
			typed:   []string{"d", "wrong approach"},
			asked:   []string{"Reason (optional, for the record"},
			code:    exitError,
			want:    []string{`who stopped the thread: "wrong approach"`, "report denied", "stopped: thread t1"},
			not:     []string{"turn 2", "done: thread t1"},
			content: "ttl_seconds = 60\n",
		},
		{
			name:    "always: the thread's policy approves the next one",
			script:  twoWrites,
			env:     []string{"NO_COLOR=1"},
			typed:   []string{"a"},
			want:    []string{"policy.set             approve ask; allow write_file:cache.toml (set by ", `1-call_1 approved by `, `"always: write_file:cache.toml"`, `2-call_2 approved by policy: "allow write_file:cache.toml"`, "done: thread t1"},
			not:     []string{"Approve 2-call_2"},
			content: "ttl_seconds = 400\n",
		},
		{
			name:    "an unclear key says so and is asked again, as a line",
			env:     []string{"NO_COLOR=1"},
			typed:   []string{"maybe", "yes"},
			asked:   []string{`"m" is not an answer: type y, a, p, n, d or s, then Enter`},
			want:    []string{"approved by", "done: thread t1"},
			not:     []string{"always:", "always, for"},
			content: "ttl_seconds = 300\n",
		},
		{
			name:    "skip leaves it parked",
			env:     []string{"NO_COLOR=1"},
			typed:   []string{"s"},
			code:    exitParked,
			want:    []string{"parked: thread t1 waits for a person"},
			content: "ttl_seconds = 60\n",
		},
		{
			name:    "--no-input parks without asking",
			env:     []string{"NO_COLOR=1"},
			args:    []string{"--no-input"},
			code:    exitParked,
			want:    []string{"parked: thread t1 waits for a person", "harness approve t1 1-call_1 --resume"},
			content: "ttl_seconds = 60\n",
		},
		{
			name:    "Ctrl-C at the prompt leaves it parked, and exits 130",
			env:     []string{"NO_COLOR=1"},
			typed:   []string{"\x03"},
			code:    exitInterrupted,
			want:    []string{"interrupted at the prompt; thread t1 still waits"},
			content: "ttl_seconds = 60\n",
		},
		{
			name:    "colour on a terminal without NO_COLOR",
			env:     []string{"TERM=xterm"},
			typed:   []string{"y"},
			want:    []string{"\x1b[32mdone:\x1b[0m thread t1"},
			content: "ttl_seconds = 300\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := cmp.Or(tc.script, writeScript)
			dir := workspace(t, map[string]string{"script.jsonl": script})
			env := append([]string{"NO_COLOR=", "HARNESS_STORE="}, tc.env...)
			args := append(append([]string{"run", "--model", "scripted:script.jsonl"}, tc.args...), "Set the cache TTL to 300")
			tm := startTerminal(t, dir, env, args...)
			if len(tc.typed) > 0 {
				tm.expect(thePrompt)
				for i, line := range tc.typed {
					if i > 0 {
						tm.expect(tc.asked[i-1])
					}
					tm.send(line)
				}
			}
			require.Equal(t, tc.code, tm.exit(), tm.output())
			for _, w := range tc.want {
				require.Contains(t, tm.output(), w)
			}
			for _, w := range tc.not {
				require.NotContains(t, tm.output(), w)
			}
			got, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
			require.NoError(t, err)
			require.Equal(t, tc.content, string(got))
			if tc.code != exitOK {
				require.NotContains(t, tm.output(), "action.started")
			}
		})
	}
}

// TestCommandOutputIsLive: a command's output shows on the terminal while
// it runs, under a spinner with the time taken; after it, its tail, its
// exit code and its time stay.
func TestCommandOutputIsLive(t *testing.T) {
	t.Parallel()
	const script = `{"text": "Running it.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo first line; while [ ! -e go ]; do sleep 0.05; done; echo second line\"}"}]}
{"text": "Done."}
`
	dir := workspace(t, map[string]string{"script.jsonl": script})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "--approve", "all", "--sandbox", "off", "Run it")
	// While the command waits, its first line is on the terminal, under
	// the spinner.
	tm.expect("      │ first line")
	tm.expect("running 1-c · ")
	require.NotContains(t, tm.output(), "action.completed")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o644))
	require.Zero(t, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, "action.completed       1-c report succeeded")
	tail := out[strings.Index(out, "action.completed       1-c"):]
	require.Contains(t, tail, "│ first line")
	require.Contains(t, tail, "│ second line")
	require.Regexp(t, `exit 0 after [0-9.]+m?s`, tail)
	require.Contains(t, out, "done: thread t1")
}

// TestPromptLeavesTheStoreFree: while the prompt waits for a person, other
// harness commands can use the store — even answer from another terminal;
// the prompt then stops asking (or, typed before it noticed, its own
// answer, the same, is appended once).
func TestPromptLeavesTheStoreFree(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": writeScript})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "Set the cache TTL to 300")
	tm.expect(thePrompt)

	stdout, stderr, code := harnessIn(t, dir, "threads")
	require.Zero(t, code, stderr)
	require.Regexp(t, `t1 +parked +confirmation 1-call_1`, stdout)
	_, stderr, code = harnessIn(t, dir, "approve", "t1")
	require.Zero(t, code, stderr)

	tm.send("y")
	require.Zero(t, tm.exit(), tm.output())
	require.Regexp(t, `\(already answered at seq 6\)|answered elsewhere: 1-call_1 approved by .* \(seq 6\)`, tm.output())
	require.Contains(t, tm.output(), "done: thread t1")
	stdout, _, _ = harnessIn(t, dir, "log", "t1")
	require.Contains(t, stdout, "1-call_1 approved by "+(&app{getenv: os.Getenv}).whoami())
	require.Equal(t, 1, strings.Count(stdout, "confirmation.answered"))
}

// TestInterruptExits130: SIGINT while a command runs stops the harness with
// exit 130, the thread resumable; with -o json, stdout is still one
// document, saying so.
func TestInterruptExits130(t *testing.T) {
	t.Parallel()
	const script = `{"text": "Waiting.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"touch started; sleep 30\"}"}]}
{"text": "Done."}
`
	dir := workspace(t, map[string]string{"script.jsonl": script})
	cmd := exec.Command(harnessBin(t), "run", "-o", "json", "--model", "scripted:script.jsonl", "--approve", "all", "--sandbox", "off", "Wait")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "HARNESS_STORE=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	}, 30*time.Second, 10*time.Millisecond, "the command never started")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", errb.String())
	require.Equal(t, exitInterrupted, ee.ExitCode(), "stderr: %s", errb.String())
	var doc struct {
		Error struct{ Kind, Message string }
		Exit  int
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), "stdout: %s", out.String())
	require.Equal(t, "interrupted", doc.Error.Kind)
	require.Equal(t, exitInterrupted, doc.Exit)
	require.Contains(t, doc.Error.Message, "thread t1 is resumable")
}
