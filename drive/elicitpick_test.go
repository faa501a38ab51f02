package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
)

func TestElicitFieldPick(t *testing.T) {
	colour := drive.ElicitField{Name: "c", Type: "string", Enum: []string{"red", "blue"}}
	require.Equal(t, "blue", colour.Pick("2"))
	require.Equal(t, "3", colour.Pick("3"), "a number past the choices is the reply, for Check to refuse")
	require.Equal(t, "0", colour.Pick("0"))
	require.Equal(t, "red", colour.Pick("red"))
	numbers := drive.ElicitField{Name: "n", Type: "integer", Enum: []string{"2", "10"}}
	require.Equal(t, "2", numbers.Pick("2"), "a number that is a choice is that choice, not the second")
	require.Equal(t, "2", numbers.Pick("1"))
	require.Equal(t, "5", drive.ElicitField{Name: "free", Type: "integer"}.Pick("5"))
}
