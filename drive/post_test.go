package drive_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// A payload is the JSON given, a file's content (@FILE) or stdin's (-);
// a file that is not there, and a stream past MaxPayload, are errors.
func TestReadPayload(t *testing.T) {
	b, err := drive.ReadPayload(`{"text": "hi"}`, nil)
	require.NoError(t, err)
	require.Equal(t, `{"text": "hi"}`, string(b))

	file := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"a": 1}`), 0o644))
	b, err = drive.ReadPayload("@"+file, nil)
	require.NoError(t, err)
	require.Equal(t, `{"a": 1}`, string(b))
	_, err = drive.ReadPayload("@"+file+".missing", nil)
	require.ErrorIs(t, err, os.ErrNotExist)

	b, err = drive.ReadPayload("-", strings.NewReader(`{"b": 2}`))
	require.NoError(t, err)
	require.Equal(t, `{"b": 2}`, string(b))
	_, err = drive.ReadPayload("-", io.LimitReader(zeros{}, drive.MaxPayload+1))
	require.ErrorContains(t, err, "over 64 MiB")
}

// zeros is a stream of zero bytes that never ends.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// An answer's key is its own, whatever posts it; any other post gets a
// fresh one.
func TestPostKey(t *testing.T) {
	require.Equal(t, "confirm-1-c1", drive.PostKey(facts.KindConfirmationAnswered, "1-c1"))
	a, b := drive.PostKey(facts.KindUserMessage, ""), drive.PostKey(facts.KindUserMessage, "")
	require.True(t, strings.HasPrefix(a, "post-"), a)
	require.Len(t, a, len("post-")+12)
	require.NotEqual(t, a, b)
	require.NoError(t, facts.ValidateCause(facts.IngressCause(a)))
	require.Contains(t, drive.IngressKindList(), "user.message, ")
}

// The last answer appended is the one a document names; answers all
// given before name none.
func TestLastPosted(t *testing.T) {
	_, ok := drive.LastPosted(nil)
	require.False(t, ok)
	given := drive.Answered{Posted: harness.Posted{Seq: 3, Duplicate: true}}
	_, ok = drive.LastPosted([]drive.Answered{given, given})
	require.False(t, ok)
	last, ok := drive.LastPosted([]drive.Answered{{Posted: harness.Posted{Seq: 7}}, {Posted: harness.Posted{Seq: 8}}, given})
	require.True(t, ok)
	require.Equal(t, uint64(8), last.Seq)
}

func TestExitOf(t *testing.T) {
	for status, want := range map[harness.Status]int{harness.StatusDone: 0, harness.StatusResumable: 0, harness.StatusParked: 3,
		harness.StatusFailed: 1, harness.StatusStopped: 1, harness.StatusStepLimit: 1} {
		require.Equal(t, want, drive.ExitOf(status), status)
	}
}

// The post a document names for AnswerAll: the last answer appended, or
// the head when nothing was.
func TestPostedOf(t *testing.T) {
	e, _ := parkedOn(t, harnesstest.ToolScript)
	th := e.Thread("t")
	p, err := drive.PostedOf(ctx, th, nil)
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: head(e, "t"), Duplicate: true}, p)
	all, err := drive.AnswerAll(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana"})
	require.NoError(t, err)
	p, err = drive.PostedOf(ctx, th, all)
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	require.Equal(t, head(e, "t"), p.Seq)
}
