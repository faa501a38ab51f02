package facts_test

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// A system.configured or action.requested written before the sandbox was
// recorded decodes with no sandbox, and encodes back to the same bytes:
// its hash, and so the chain after it, does not change.
func TestSandboxRecordKeepsOldPayloads(t *testing.T) {
	for _, tc := range []struct {
		kind    facts.Kind
		payload any
		hex     string // the payload as it was encoded before Sandbox existed
	}{
		// {"model":"scripted","version":"v1"}
		{facts.KindSystemConfigured, facts.SystemConfigured{Model: "scripted", Version: "v1"}, "82a56d6f64656ca87363726970746564a776657273696f6ea27631"},
		// {"action_id":"a1","adapter":"run_command"}
		{facts.KindActionRequested, facts.ActionRequested{ActionID: "a1", Adapter: "run_command"}, "82a9616374696f6e5f6964a26131a761646170746572ab72756e5f636f6d6d616e64"},
	} {
		old, err := hex.DecodeString(tc.hex)
		require.NoError(t, err)
		d, err := facts.NewDraft(tc.kind, "k", tc.payload)
		require.NoError(t, err)
		require.Equal(t, old, d.Data, "%s: the same bytes as before", tc.kind)
		f := facts.Fact{Thread: "t", Seq: 1, Kind: tc.kind, Cause: "k", Data: old}
		switch tc.kind {
		case facts.KindSystemConfigured:
			p, err := facts.Decode[facts.SystemConfigured](f)
			require.NoError(t, err)
			require.Nil(t, p.Sandbox)
		case facts.KindActionRequested:
			p, err := facts.Decode[facts.ActionRequested](f)
			require.NoError(t, err)
			require.Nil(t, p.Sandbox)
		}
	}
}

func TestSandboxRecordRoundTrip(t *testing.T) {
	sb := &facts.Sandbox{Mode: facts.SandboxReadOnly, Network: true, Writable: []string{"/c"}, Temp: "/tmp/harness-cmd-*",
		Hidden: []string{"/ws/.harness"}, HiddenNames: []string{".harness"}, Env: []string{"PATH"}, Mechanism: "m", LandlockABI: 7}
	d, err := facts.NewDraft(facts.KindActionRequested, "k", facts.ActionRequested{ActionID: "a1", Sandbox: sb})
	require.NoError(t, err)
	p, err := facts.Decode[facts.ActionRequested](facts.Fact{Thread: "t", Seq: 1, Kind: d.Kind, Cause: d.Cause, Data: d.Data})
	require.NoError(t, err)
	require.Equal(t, sb, p.Sandbox)
}

func TestSandboxRecordValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		sb   facts.Sandbox
		err  string
	}{
		{"fine", facts.Sandbox{Mode: facts.SandboxWorkspaceWrite, Writable: []string{"/ws"}}, ""},
		{"off", facts.Sandbox{Mode: facts.SandboxOff}, ""},
		{"no mode", facts.Sandbox{}, "sandbox: missing mode"},
		{"unknown mode", facts.Sandbox{Mode: "yolo"}, `sandbox: mode "yolo" is not one of`},
		{"negative abi", facts.Sandbox{Mode: facts.SandboxOff, LandlockABI: -1}, "sandbox: landlock_abi -1 is negative"},
		{"empty path", facts.Sandbox{Mode: facts.SandboxReadOnly, Hidden: []string{""}}, "sandbox: hidden[0] is empty"},
		{"empty env name", facts.Sandbox{Mode: facts.SandboxReadOnly, Env: []string{"PATH", ""}}, "sandbox: env[1] is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, payload := range []struct {
				kind facts.Kind
				p    any
			}{
				{facts.KindSystemConfigured, facts.SystemConfigured{Sandbox: &tc.sb}},
				{facts.KindActionRequested, facts.ActionRequested{ActionID: "a1", Sandbox: &tc.sb}},
			} {
				_, err := facts.NewDraft(payload.kind, "k", payload.p)
				if tc.err == "" {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, facts.ErrPayload)
					require.ErrorContains(t, err, tc.err)
				}
			}
		})
	}
}
