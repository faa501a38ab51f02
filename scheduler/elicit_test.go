package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// An answer to a server's question is checked against the schema the
// server sent, which refers to nothing outside itself: a $ref to a file
// or a URL is never loaded.
func TestCheckElicited(t *testing.T) {
	schema := facts.RawJSON(`{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":5},"n":{"type":"integer"}}}`)
	accept := func(c string) facts.Elicited {
		return facts.Elicited{Action: facts.ElicitAccept, Content: facts.RawJSON(c)}
	}
	require.NoError(t, scheduler.CheckElicited(schema, accept(`{"name":"Ana","n":3}`)))
	require.NoError(t, scheduler.CheckElicited(schema, facts.Elicited{Action: facts.ElicitDecline}))
	require.NoError(t, scheduler.CheckElicited(schema, facts.Elicited{Action: facts.ElicitCancel}))
	for _, bad := range []facts.Elicited{
		accept(`{}`), accept(`{"name":"Anastasia"}`), accept(`{"name":"Ana","n":1.5}`), accept(`["Ana"]`), accept(`"Ana"`), accept(`{`),
		{Action: facts.ElicitDecline, Content: facts.RawJSON(`{"name":"Ana"}`)}, {Action: "maybe"},
	} {
		require.Error(t, scheduler.CheckElicited(schema, bad), "%s %s", bad.Action, bad.Content)
	}
	for _, hostile := range []string{
		`{"$ref":"file:///etc/passwd"}`,
		`{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/x.json"}}}`,
		`{"$schema":"file:///etc/passwd","type":"object"}`,
	} {
		err := scheduler.CheckElicited(facts.RawJSON(hostile), accept(`{"a":"x"}`))
		require.Error(t, err, hostile)
		require.NotContains(t, err.Error(), "root:", "nothing of the file is read")
	}
}
