package drive_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

func TestRefusedSaysItPlainly(t *testing.T) {
	deep := fmt.Errorf("post t1: append: %w: %s: confirmation \"x\": no such request", fold.ErrRefused, facts.KindConfirmationAnswered)
	err := drive.Refused(deep, "t1", facts.KindConfirmationAnswered)
	require.EqualError(t, err, `thread t1 does not take this confirmation.answered: confirmation "x": no such request`)
	require.ErrorIs(t, err, fold.ErrRefused)

	other := errors.New("disk full")
	require.Same(t, other, drive.Refused(other, "t1", facts.KindBudgetRaised))
}
