package drive_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
)

// An answer's secret comes from stdin when asked (NAME=- or content -),
// once, bounded; an input that does not fit is ErrBadReply.
func TestElicitInputFromStdin(t *testing.T) {
	in := func(action, content string, fields []string, stdin string) drive.ElicitInput {
		return drive.ElicitInput{Request: "1-a-e1", Action: action, Content: content, Fields: fields, Stdin: strings.NewReader(stdin)}
	}
	r, err := in("accept", "", []string{"name=Ana", "password=-"}, "hunter2\n").Reply()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"name": "Ana", "password": "hunter2"}, r.Fields)
	require.Equal(t, "1-a-e1", r.Request)

	r, err = in("accept", "-", nil, `{"password":"hunter2"}`).Reply()
	require.NoError(t, err)
	require.JSONEq(t, `{"password":"hunter2"}`, string(r.Content))

	_, err = in("accept", "", []string{"a=-", "b=-"}, "x\n").Reply()
	require.ErrorContains(t, err, "one value only")
	require.ErrorIs(t, err, drive.ErrBadReply)
	_, err = in("accept", "", []string{"a=-"}, strings.Repeat("x", drive.MaxStdinAnswer+1)).Reply()
	require.ErrorContains(t, err, "over")
	require.ErrorIs(t, err, drive.ErrBadReply)

	for _, bad := range []drive.ElicitInput{
		in("maybe", "", nil, ""), in("decline", "{}", nil, ""), in("accept", "{}", []string{"a=b"}, ""),
		in("accept", "{not json", nil, ""), in("accept", "", []string{"=x"}, ""), in("accept", "", []string{"novalue"}, ""),
	} {
		_, err := bad.Reply()
		require.ErrorIs(t, err, drive.ErrBadReply, "%+v", bad)
	}
}
