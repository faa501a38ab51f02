package drive_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
)

// A YesNo is JSON true, false or null; absent under omitempty when
// unsaid; anything else is refused.
func TestYesNoJSON(t *testing.T) {
	type req struct {
		Resume drive.YesNo `json:"resume,omitempty"`
	}
	for in, want := range map[string]drive.YesNo{`{}`: drive.Unsaid, `{"resume": null}`: drive.Unsaid, `{"resume": true}`: drive.Yes, `{"resume": false}`: drive.No} {
		var r req
		require.NoError(t, json.Unmarshal([]byte(in), &r), in)
		require.Equal(t, want, r.Resume, in)
	}
	for _, in := range []string{`{"resume": "true"}`, `{"resume": 1}`, `{"resume": "yes"}`, `{"resume": [true]}`} {
		var r req
		require.ErrorIs(t, json.Unmarshal([]byte(in), &r), drive.ErrNotYesNo, in)
	}
	for y, want := range map[drive.YesNo]string{drive.Unsaid: `{}`, drive.Yes: `{"resume":true}`, drive.No: `{"resume":false}`} {
		b, err := json.Marshal(req{Resume: y})
		require.NoError(t, err)
		require.Equal(t, want, string(b))
	}
	require.True(t, drive.Unsaid.Or(true))
	require.False(t, drive.No.Or(true))
	require.True(t, drive.Yes.Or(false))
	require.False(t, drive.Unsaid.Said())
}
