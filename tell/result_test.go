package tell_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
)

func TestResultOfAnswersEveryRequestButAChilds(t *testing.T) {
	st := drive.State{Thread: "t1", Status: harness.StatusParked, Waits: []drive.Pending{
		{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-c1"}, Tool: "write_file"},
		{Wait: fold.Wait{Kind: fold.WaitChild, RequestID: "d1"}},
	}}
	var asked []string
	r := tell.ResultOf(st, "resume it", func(id string, p drive.Pending) string {
		asked = append(asked, id+" "+drive.Ref(p))
		return "answer " + drive.Ref(p)
	}, nil)
	require.Equal(t, []string{"t1 " + drive.Ref(st.Waits[0])}, asked)
	require.Equal(t, map[string]string{drive.Ref(st.Waits[0]): "answer " + drive.Ref(st.Waits[0])}, r.Answers)

	b, err := json.Marshal(r)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Equal(t, "t1", doc["thread"], "the state's keys stand at the top")
	require.Equal(t, "resume it", doc["hint"])
	require.Equal(t, []any{}, doc["facts"], "no facts appended is an empty list, not null")

	none := tell.ResultOf(drive.State{Thread: "t2", Status: harness.StatusDone}, "", nil, nil)
	b, err = json.Marshal(none)
	require.NoError(t, err)
	require.NotContains(t, string(b), `"answers"`)
	require.NotContains(t, string(b), `"hint"`)
}
