package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
)

func TestChoice(t *testing.T) {
	closed := drive.Pending{Options: []string{"red", "blue"}}
	open := drive.Pending{Options: []string{"red", "blue"}, AllowFreeText: true}
	free := drive.Pending{}
	for _, c := range []struct {
		p     drive.Pending
		reply string
		want  string
		ok    bool
	}{
		{closed, "2", "blue", true},
		{closed, "red", "red", true},
		{closed, "green", "", false},
		{closed, "3", "", false},
		{closed, "0", "", false},
		{closed, "-1", "", false},
		{closed, "", "", false},
		{open, "green", "green", true},
		{open, "1", "red", true},
		{open, "3", "3", true},
		{free, "7", "7", true},
		{free, "", "", false},
	} {
		got, ok := c.p.Choice(c.reply)
		require.Equal(t, c.want, got, "%+v %q", c.p, c.reply)
		require.Equal(t, c.ok, ok, "%+v %q", c.p, c.reply)
	}
}
