package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// TestPostTogether: facts posted together are one append, each under its
// key; posted again, nothing is appended (Duplicate); when one of the
// later keys is in the log without the first, the post is refused at
// once (ErrPartialPost) rather than retried for ever against the
// store's duplicate.
func TestPostTogether(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Done."}
`)
	out, err := e.RT.Start(ctx, e.Actor, "t", "Hello")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	msg := func(text string) facts.Draft {
		d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: text})
		require.NoError(t, err)
		return d
	}
	h0 := len(e.Log("t"))
	p, err := e.Thread("t").Post(ctx, msg("one"), "a", harness.Ingress{Draft: msg("two"), Key: "b"})
	require.NoError(t, err)
	require.Equal(t, uint64(h0+1), p.Seq, "the seq of the first")
	log := e.Log("t")
	require.Len(t, log, h0+2)
	require.Equal(t, log[h0].At, log[h0+1].At, "one append")
	require.Equal(t, facts.IngressCause("b"), log[h0+1].Cause)
	again, err := e.Thread("t").Post(ctx, msg("one"), "a", harness.Ingress{Draft: msg("two"), Key: "b"})
	require.NoError(t, err)
	require.Equal(t, harness.Posted{Seq: p.Seq, Duplicate: true}, again)

	_, err = e.Thread("t").Post(ctx, msg("three"), "c")
	require.NoError(t, err)
	bounded, cancel := context.WithTimeout(ctx, 30*time.Second) // room for a loaded machine
	defer cancel()
	_, err = e.Thread("t").Post(bounded, msg("four"), "d", harness.Ingress{Draft: msg("three"), Key: "c"})
	require.ErrorIs(t, err, harness.ErrPartialPost)
	require.Len(t, e.Log("t"), h0+3, "nothing appended")
}
