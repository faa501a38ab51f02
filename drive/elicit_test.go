package drive_test

import (
	"strings"
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

// A server's default is kept only when the field takes it: of its type,
// one of its choices, a plain bounded string; a reply that leaves the
// field out, or empty, takes it.
func TestElicitDefaultOf(t *testing.T) {
	long := `"` + strings.Repeat("x", drive.MaxElicitDefault+1) + `"`
	e := &facts.Elicit{ActionID: "1-a", Server: "s", Schema: facts.RawJSON(`{"type":"object","properties":{
		"name":{"type":"string","default":"Ana"},"ttl":{"type":"integer","default":300},"size":{"type":"number","default":2.5},
		"color":{"type":"string","enum":["red","blue"],"default":"blue"},"ok":{"type":"boolean","default":false},
		"tier":{"type":"string","enum":["a","b"],"default":"c"},"count":{"type":"integer","default":2.5},
		"huge":{"type":"integer","default":1e400},"esc":{"type":"string","default":"\u001b[2J"},
		"bidi":{"type":"string","default":"a\u202eb"},"long":{"type":"string","default":` + long + `},
		"typed":{"type":"string","default":7},"flag":{"type":"boolean","default":"true"},"obj":{"type":"string","default":{"a":1}}}}`)}
	got := map[string]string{}
	for _, f := range drive.ElicitFields(e) {
		got[f.Name] = f.Default
	}
	require.Equal(t, map[string]string{"name": "Ana", "ttl": "300", "size": "2.5", "color": "blue", "ok": "false",
		"tier": "", "count": "", "huge": "", "esc": "", "bidi": "", "long": "", "typed": "", "flag": "", "obj": ""}, got)

	// (A number float64 cannot hold refuses the whole schema when an
	// answer is checked.)
	e.Schema = facts.RawJSON(strings.Replace(string(e.Schema), `"huge":{"type":"integer","default":1e400},`, "", 1))
	p := drive.AskedPending(drive.Event{Kind: drive.EventAsked, Thread: "t1", Request: "1-a-e1", Elicit: e})
	r := drive.Reply{Kind: p.Kind, Request: p.RequestID, Elicit: facts.ElicitAccept, Fields: map[string]string{"name": "", "color": "red"}}
	d, err := r.Draft(p)
	require.NoError(t, err)
	require.Contains(t, string(d.Data), `{"color":"red","name":"Ana","ok":false,"size":2.5,"ttl":300}`)
	// Content given whole takes the defaults of what it leaves out too.
	r = drive.Reply{Kind: p.Kind, Request: p.RequestID, Elicit: facts.ElicitAccept, Content: []byte(`{"name":"Bo","ok":true}`)}
	d, err = r.Draft(p)
	require.NoError(t, err)
	require.Contains(t, string(d.Data), `{"color":"blue","name":"Bo","ok":true,"size":2.5,"ttl":300}`)
	// A terminal's empty reply picks the default.
	for _, f := range drive.ElicitFields(e) {
		if f.Name == "ttl" {
			require.Equal(t, "300", f.Pick(""))
		}
		if f.Name == "tier" {
			require.Equal(t, "", f.Pick(""))
		}
	}
}
