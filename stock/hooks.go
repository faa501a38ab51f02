package stock

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
)

// HookSettings are the hooks a settings file declares ("hooks"), by event
// (facts.HookEvents):
//
//	"hooks": {
//	  "before_tool": [{"name": "no-rm", "command": "sh .harness/no-rm.sh", "matcher": "run_command", "timeout": 5}],
//	  "after_tool":  [{"argv": ["notify-send", "tool ran"]}]
//	}
//
// A hook runs code, so every hook of a file inside the workspace waits
// for the person's trust of that file (see Widens), as an MCP server does.
type HookSettings map[string][]HookSpec

// HookSpec is one hook: a command (a shell line, or argv), the tools it
// is for (Matcher: "|"-separated globs of tool names; "" every tool), its
// timeout in seconds (0: DefaultHookTimeout) and, from the user's own
// settings only, "sandbox": "off" to run it outside the sandbox.
type HookSpec struct {
	Name    string   `json:"name,omitempty"`
	Command string   `json:"command,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Matcher string   `json:"matcher,omitempty"`
	Timeout float64  `json:"timeout,omitempty"`
	Sandbox string   `json:"sandbox,omitempty"`
}

// DefaultHookTimeout is how long a hook runs before it is killed, when its
// settings give no timeout.
const DefaultHookTimeout = 60 * time.Second

// maxHookRead is how much of a hook's stdout and stderr is read (its
// head and tail): its answer must be whole to be read; the record keeps
// facts.MaxHookOutput bytes of each.
const maxHookRead = 64 << 10

func (h HookSettings) validate() error {
	for event, list := range h {
		if !slices.Contains(facts.HookEvents, event) {
			return fmt.Errorf("hooks: event %q: want one of %s", event, strings.Join(facts.HookEvents, ", "))
		}
		for i, s := range list {
			where := fmt.Sprintf("hooks: %s[%d]", event, i)
			switch {
			case (s.Command == "") == (len(s.Argv) == 0):
				return fmt.Errorf("%s: give either command (a shell line) or argv (a list), not both or neither", where)
			case len(s.Argv) > 0 && s.Argv[0] == "":
				return fmt.Errorf("%s: argv[0] is empty", where)
			case s.Timeout < 0:
				return fmt.Errorf("%s: timeout %g: want seconds, more than 0 (0 or none: %s)", where, s.Timeout, DefaultHookTimeout)
			case s.Sandbox != "" && s.Sandbox != string(sandbox.Off):
				return fmt.Errorf("%s: sandbox %q: a hook runs in the sandbox; only \"off\" (from your own settings) is another choice", where, s.Sandbox)
			}
			for _, m := range strings.Split(s.Matcher, "|") {
				if _, err := path.Match(strings.TrimSpace(m), ""); err != nil {
					return fmt.Errorf("%s: matcher %q: %v", where, s.Matcher, err)
				}
			}
		}
	}
	return nil
}

// HookInForce is a hook a layer of settings declares: its event and spec,
// where it comes from, and whether it runs (Trusted: its layer is).
type HookInForce struct {
	Event      string
	Spec       HookSpec
	Scope      Scope
	Path       string
	FileDigest string
	Trusted    bool
	// Digest identifies the declaration: its scope, event and spec.
	Digest string
}

// Name is the hook's name: its own, else its command's first word.
func (h HookInForce) Name() string {
	if h.Spec.Name != "" {
		return h.Spec.Name
	}
	first := h.Spec.Command
	if len(h.Spec.Argv) > 0 {
		first = h.Spec.Argv[0]
	}
	if f := strings.Fields(first); len(f) > 0 {
		return filepath.Base(f[0])
	}
	return h.Event
}

// CommandLine is the hook's command as people read it.
func (h HookInForce) CommandLine() string {
	if len(h.Spec.Argv) > 0 {
		return strings.Join(h.Spec.Argv, " ")
	}
	return h.Spec.Command
}

// Timeout is how long the hook may run.
func (h HookInForce) Timeout() time.Duration {
	if h.Spec.Timeout > 0 {
		return time.Duration(h.Spec.Timeout * float64(time.Second))
	}
	return DefaultHookTimeout
}

// Unsandboxed reports whether the hook runs outside the sandbox: only a
// user-scope hook that says so. Another's "sandbox": "off" is ignored.
func (h HookInForce) Unsandboxed() bool {
	return h.Scope == ScopeUser && h.Spec.Sandbox == string(sandbox.Off)
}

// Record is the hook as a thread records it.
func (h HookInForce) Record() facts.Hook {
	return facts.Hook{Name: h.Name(), Event: h.Event, Matcher: h.Spec.Matcher, Command: h.CommandLine(),
		Scope: string(h.Scope), Path: h.Path, FileDigest: h.FileDigest, Digest: h.Digest}
}

// hooksOf are the hooks src declares, in the order of facts.HookEvents,
// then as listed.
func hooksOf(src *SettingsSource, trusted bool) []HookInForce {
	var out []HookInForce
	for _, event := range facts.HookEvents {
		for _, spec := range src.Settings.Hooks[event] {
			b, _ := json.Marshal(struct {
				Scope Scope
				Event string
				Spec  HookSpec
			}{src.Scope, event, spec})
			out = append(out, HookInForce{Event: event, Spec: spec, Scope: src.Scope, Path: src.Path, FileDigest: src.Digest,
				Trusted: trusted, Digest: digestOf(b)})
		}
	}
	return out
}

// HookRecord are the hooks that run, as a thread records them, in the
// order they run: the layers' order, weakest first.
func (l Layered) HookRecord() []facts.Hook {
	var out []facts.Hook
	for _, h := range l.Hooks {
		if h.Trusted {
			out = append(out, h.Record())
		}
	}
	return out
}

// hookRunner runs the hooks in force (harness.HookRunner): in the
// workspace, in the sandbox the tools' commands run in (without the
// network unless they have it), each within its timeout.
type hookRunner struct {
	root  string
	spec  sandbox.Spec
	hooks map[string]HookInForce // by Digest
}

func newHookRunner(root string, spec sandbox.Spec, in []HookInForce) *hookRunner {
	r := &hookRunner{root: root, spec: spec.Clone(), hooks: map[string]HookInForce{}}
	r.spec.Nested = nil
	for _, h := range in {
		if h.Trusted {
			r.hooks[h.Digest] = h
		}
	}
	return r
}

// RunHook runs the hook in force whose declaration is h's.
func (r *hookRunner) RunHook(ctx context.Context, h facts.Hook, input []byte) (action.HookExit, error) {
	in, ok := r.hooks[h.Digest]
	if !ok {
		return action.HookExit{}, fmt.Errorf("hook %s (%s %s): %w", h.Name, h.Scope, h.Path, harness.ErrHookNotInForce)
	}
	spec := r.spec
	if in.Unsandboxed() {
		spec = spec.Clone()
		spec.Mode = sandbox.Off
	}
	return tools.RunHook(ctx, r.root, in.Spec.Command, in.Spec.Argv, spec, input, in.Timeout(), maxHookRead)
}

// HookView is a hook as a front end shows it (harness config): its event,
// name and command, where it comes from, whether it runs (Trusted), its
// matcher, timeout and where it runs.
type HookView struct {
	Event   string  `json:"event"`
	Name    string  `json:"name"`
	Scope   Scope   `json:"scope"`
	Path    string  `json:"path"`
	Trusted bool    `json:"trusted"`
	Command string  `json:"command"`
	Matcher string  `json:"matcher,omitempty"`
	Timeout float64 `json:"timeout_seconds"`
	Sandbox string  `json:"sandbox"`
}

// HookViews are the hooks the layers declare, weakest first, those that
// do not run (their file not trusted) included.
func (l Layered) HookViews() []HookView {
	out := []HookView{}
	for _, h := range l.Hooks {
		where := "sandbox"
		switch {
		case h.Unsandboxed():
			where = "off"
		case h.Spec.Sandbox == string(sandbox.Off):
			where = "sandbox (off ignored: only your own settings may say it)"
		}
		out = append(out, HookView{Event: h.Event, Name: h.Name(), Scope: h.Scope, Path: h.Path, Trusted: h.Trusted,
			Command: h.CommandLine(), Matcher: h.Spec.Matcher, Timeout: h.Timeout().Seconds(), Sandbox: where})
	}
	return out
}
