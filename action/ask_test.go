package action_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// toolSettings is a settings document that said "ask" with a *bool.
type toolSettings struct {
	Name string     `json:"name"`
	Ask  action.Ask `json:"ask,omitempty"`
}

func TestAskReadsWhatABoolPointerWrote(t *testing.T) {
	for doc, want := range map[string]action.Ask{
		`{"name": "w"}`:                  action.AskDefault,
		`{"name": "w", "ask": null}`:     action.AskDefault,
		`{"name": "w", "ask": true}`:     action.AskAlways,
		`{"name": "w", "ask": false}`:    action.AskNever,
		`{"name": "w", "ask": "never"}`:  action.AskNever,
		`{"name": "w", "ask": "always"}`: action.AskAlways,
	} {
		var s toolSettings
		require.NoError(t, json.Unmarshal([]byte(doc), &s), doc)
		require.Equal(t, want, s.Ask, doc)
		b, err := json.Marshal(s)
		require.NoError(t, err)
		var back toolSettings
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, s, back, "%s round-trips as %s", doc, b)
	}
	b, err := json.Marshal(toolSettings{Name: "w", Ask: action.AskNever})
	require.NoError(t, err)
	require.JSONEq(t, `{"name": "w", "ask": false}`, string(b))

	for _, bad := range []string{`{"ask": 1}`, `{"ask": "sometimes"}`, `{"ask": [true]}`} {
		var s toolSettings
		require.ErrorContains(t, json.Unmarshal([]byte(bad), &s), "ask", bad)
	}
	_, err = json.Marshal(toolSettings{Ask: action.Ask(9)})
	require.Error(t, err)
}

func TestAskAsks(t *testing.T) {
	require.False(t, action.AskDefault.Asks(action.Read))
	require.True(t, action.AskDefault.Asks(action.Write))
	require.True(t, action.AskDefault.Asks(action.Execute))
	require.True(t, action.AskAlways.Asks(action.Read))
	require.False(t, action.AskNever.Asks(action.Execute))
	require.True(t, action.Ask(9).Asks(action.Read), "an unknown value asks")
	require.Error(t, action.Ask(9).Validate())
}

// TestCapabilityIsOneType: the capability a request records is the type
// the boundary grants, and the same string on the wire.
func TestCapabilityIsOneType(t *testing.T) {
	var c action.Capability = facts.ActionRequested{Capability: action.Execute}.Capability
	require.NoError(t, c.Validate())
	require.ErrorContains(t, facts.Capability("admin").Validate(), `capability "admin"`)
	b, err := json.Marshal(facts.ActionRequested{ActionID: "a", Capability: action.Write})
	require.NoError(t, err)
	require.Contains(t, string(b), `"capability":"write"`)
}
