package model_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

func TestExchangeSurvivesAsError(t *testing.T) {
	var ce *model.CallError
	err := error(&model.Error{Class: facts.ClassTransient, Err: &model.CallError{Provider: "openai", Status: 429, Message: "slow down"}})
	require.True(t, errors.As(err, &ce))
	require.Equal(t, "model: transient: openai: 429 Too Many Requests: slow down", err.Error())
	require.Nil(t, model.ExchangeOf(errors.New("other")))
}

// TestReasonAndRetryAfter: what a person is told while a turn waits, and
// the wait a provider error carries.
func TestReasonAndRetryAfter(t *testing.T) {
	wrap := func(ce *model.CallError) error { return &model.Error{Class: facts.ClassTransient, Err: ce} }
	tests := []struct {
		err    error
		reason string
		wait   time.Duration
	}{
		{wrap(&model.CallError{Provider: "openai", Status: 429, RetryAfter: 5 * time.Second}), "rate limited by openai (429)", 5 * time.Second},
		{wrap(&model.CallError{Provider: "anthropic", Status: 529}), "anthropic is overloaded (529)", 0},
		{wrap(&model.CallError{Provider: "openai", Status: 503}), "openai is unavailable (503)", 0},
		{wrap(&model.CallError{Provider: "openai", Status: 502}), "openai server error (502)", 0},
		{wrap(&model.CallError{Provider: "openai", Status: 409}), "openai answered 409 Conflict", 0},
		{wrap(&model.CallError{Provider: "anthropic", Status: 200, Type: "overloaded_error"}), "anthropic is overloaded (overloaded_error)", 0},
		{wrap(&model.CallError{Provider: "openai", Status: 200, Type: "rate_limit_exceeded"}), "rate limited by openai (rate_limit_exceeded)", 0},
		{wrap(&model.CallError{Provider: "openai", Status: 200, Type: "server_error"}), "openai stream error (server_error)", 0},
		{wrap(&model.CallError{Provider: "openai", Status: 200, Err: model.ErrStreamCut}), "the stream from openai was cut off", 0},
		{errors.New("scripted transient failure 1 at turn 1"), "scripted transient failure 1 at turn 1", 0},
	}
	for _, tc := range tests {
		require.Equal(t, tc.reason, model.Reason(tc.err))
		wait, ok := model.RetryAfter(tc.err)
		require.Equal(t, tc.wait, wait)
		require.Equal(t, tc.wait > 0, ok)
	}
}
