package tell_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tell"
)

// The terminal shows a field's default, and that Enter takes it; the
// question's field lines name it; a hostile default is not shown.
func TestFieldDefaultOnTheTerminal(t *testing.T) {
	e := &facts.Elicit{ActionID: "1-a", Server: "s", Schema: facts.RawJSON(`{"type":"object","required":["ttl"],"properties":{
		"ttl":{"type":"integer","default":300},"name":{"type":"string"},"note":{"type":"string","default":"\u001b[2Jpwned"}}}`)}
	labels := map[string]string{}
	for _, f := range drive.ElicitFields(e) {
		labels[f.Name] = tell.FieldLabel(f)
	}
	require.Equal(t, `ttl [integer, required, Enter takes the default "300"]`, labels["ttl"])
	require.Equal(t, `name [string, optional: Enter leaves it out]`, labels["name"])
	require.Equal(t, `note [string, optional: Enter leaves it out]`, labels["note"])
	var b strings.Builder
	tell.WriteAsked(&b, drive.Event{Kind: drive.EventAsked, Thread: "t1", Request: "1-a-e1", ActionID: "1-a", Text: "Settings?", Elicit: e})
	require.Contains(t, b.String(), `field ttl (integer, required, default "300")`)
	require.NotContains(t, b.String(), "pwned")
	require.NotContains(t, b.String(), "\x1b")
}
