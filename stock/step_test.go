package stock_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// A step is named by its seq or its action's id: an action comes whole
// (whichever of its facts is named), a model turn with the kept bytes,
// the instructions with their text; a name of nothing is ErrNoStep.
func TestSessionStep(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Be brief.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644))
	script, err := model.ParseScript("read", []byte(`{"text": "Reading.", "tool_calls": [{"id": "c1", "name": "read_file", "args": "{\"path\":\"a.txt\"}"}]}
{"text": "Done."}`))
	require.NoError(t, err)
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, p, stock.SessionOptions{Getenv: sessionEnv(t, ""), Create: true})
	require.NoError(t, err)
	defer s.Close()
	rt, _, err := s.Runtime(stock.WithModel(script))
	require.NoError(t, err)
	_, err = rt.Start(ctx, s.Stock.Actor, "t1", "Read a.txt")
	require.NoError(t, err)

	seqOf := map[facts.Kind]uint64{}
	for f, err := range s.Store.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		if seqOf[f.Kind] == 0 {
			seqOf[f.Kind] = f.Seq
		}
	}

	byID, err := s.Step(ctx, "t1", "1-c1")
	require.NoError(t, err)
	require.NotNil(t, byID.Action)
	require.Equal(t, "1-c1", byID.Action.Action.ID)
	require.Equal(t, "read_file", byID.Action.Action.Requested.Adapter)
	bySeq, err := s.Step(ctx, "t1", fmtSeq(seqOf[facts.KindActionCompleted]))
	require.NoError(t, err)
	require.NotNil(t, bySeq.Action, "a seq of an action's fact is the action")
	require.Equal(t, "1-c1", bySeq.Action.Action.ID)

	turn, err := s.Step(ctx, "t1", fmtSeq(seqOf[facts.KindModelTurn]))
	require.NoError(t, err)
	require.NotNil(t, turn.Turn)
	require.Equal(t, "Reading.", turn.Turn.Text)

	ins, err := s.Step(ctx, "t1", fmtSeq(seqOf[facts.KindInstructionsRead]))
	require.NoError(t, err)
	require.NotNil(t, ins.Instructions)
	require.Equal(t, []string{"Be brief.\n"}, ins.Texts)

	msg, err := s.Step(ctx, "t1", "1")
	require.NoError(t, err)
	require.Nil(t, msg.Action)
	require.Nil(t, msg.Turn)
	require.Equal(t, uint64(1), msg.Fact.Seq)

	_, err = s.Step(ctx, "t1", "1-nope")
	require.ErrorIs(t, err, stock.ErrNoAction)
	require.ErrorIs(t, err, stock.ErrNoStep)
	_, err = s.Step(ctx, "t1", "999")
	require.ErrorIs(t, err, stock.ErrNoStep)
	require.False(t, errors.Is(err, stock.ErrNoAction))
	require.ErrorContains(t, err, "thread t1 has no seq 999 (it has facts 1 to ")
	_, err = s.Step(ctx, "t1", "t2.1-d1/1")
	require.ErrorIs(t, err, stock.ErrNoStep, "a thread outside t1's tree")
}

func fmtSeq(seq uint64) string { return fmt.Sprint(seq) }
