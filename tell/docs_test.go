package tell_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
)

// The documents keep the field names scripts read: a renamed field is a
// broken script.
func TestDocsFieldNames(t *testing.T) {
	for _, c := range []struct {
		doc  any
		want string
	}{
		{tell.ForkDoc{Thread: "t1-at5", From: "t1", At: 5, Seq: 6, Status: harness.StatusParked},
			`{"thread":"t1-at5","from":"t1","at":5,"seq":6,"status":"parked"}`},
		{tell.StopDoc{Thread: "t1", Status: harness.StatusStopped, Seq: 9},
			`{"thread":"t1","status":"stopped","seq":9,"facts":null}`},
		{tell.KeyDoc{Path: "k.pem", Witness: "w.jsonl", Made: true},
			`{"key":"","path":"k.pem","witness":"w.jsonl","made":true}`},
		{tell.RerunSuiteDoc{Model: "scripted:b", Key: "k1"},
			`{"model":"scripted:b","key":"k1","rows":null}`},
	} {
		b, err := json.Marshal(c.doc)
		require.NoError(t, err)
		require.JSONEq(t, c.want, string(b))
	}
}
