package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

// A field of a server's form checks what is typed into it as a reply's
// Fields are typed: by its type, its choices, and whether it is
// required; the whole reply is then checked against the schema.
func TestElicitFieldCheck(t *testing.T) {
	e := &facts.Elicit{ActionID: "1-a", Server: "s", Schema: facts.RawJSON(`{"type":"object","required":["name"],"properties":{
		"name":{"type":"string"},"age":{"type":"integer","minimum":0},"size":{"type":"number"},
		"color":{"type":"string","enum":["red","blue"]},"ok":{"type":"boolean"}}}`)}
	fields := map[string]drive.ElicitField{}
	for _, f := range drive.ElicitFields(e) {
		fields[f.Name] = f
	}
	require.Len(t, fields, 5)
	for _, c := range []struct {
		field, v string
		bad      bool
	}{
		{"name", "Ana", false}, {"name", "", true},
		{"age", "3", false}, {"age", "3.5", true}, {"age", "old", true}, {"age", "", false},
		{"size", "2.5", false}, {"size", "big", true},
		{"color", "red", false}, {"color", "green", true}, {"color", "", false},
		{"ok", "yes", false}, {"ok", "", false},
	} {
		err := fields[c.field].Check(c.v)
		if c.bad {
			require.ErrorIs(t, err, drive.ErrBadReply, "%s=%q", c.field, c.v)
		} else {
			require.NoError(t, err, "%s=%q", c.field, c.v)
		}
	}
	p := drive.AskedPending(drive.Event{Kind: drive.EventAsked, Thread: "t1", Request: "1-a-e1", Elicit: e})
	r := drive.Reply{Kind: p.Kind, Request: p.RequestID, Elicit: facts.ElicitAccept, Fields: map[string]string{"name": "Ana", "age": "-1"}}
	_, err := r.Draft(p)
	require.ErrorIs(t, err, drive.ErrBadReply, "under the schema's minimum")
	r.Fields["age"] = "7"
	d, err := r.Draft(p)
	require.NoError(t, err)
	require.Contains(t, string(d.Data), `{"age":7,"name":"Ana"}`)
}
