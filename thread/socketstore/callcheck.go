package socketstore

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// checkCall checks a call against the bounds the server reads it within
// (see callBudget, decodeRequest) before anything of it is written: a
// call the server would refuse fails here with the same error value
// (ErrProtocol), and the connection, on which nothing was written, stays
// usable. The call's size is counted by encoding it to a counter, so
// nothing of a large call is copied.
func checkCall(req *request) error {
	switch {
	case len(req.Thread) > maxWireID:
		return fmt.Errorf("%w: a call's thread of %d bytes (at most %d)", ErrProtocol, len(req.Thread), maxWireID)
	case len(req.Text) > maxWireText:
		return fmt.Errorf("%w: a call's text of %d bytes (at most %d)", ErrProtocol, len(req.Text), maxWireText)
	case len(req.Drafts) > maxCallItems:
		return fmt.Errorf("%w: %d drafts (at most %d)", ErrProtocol, len(req.Drafts), maxCallItems)
	case len(req.Keys) > maxCallItems || len(req.Values) > maxCallItems || len(req.Deletes) > maxCallItems:
		return fmt.Errorf("%w: %d meta keys (at most %d)", ErrProtocol, max(len(req.Keys), len(req.Values), len(req.Deletes)), maxCallItems)
	}
	for _, d := range req.Drafts {
		if len(d.Kind) > maxWireText || len(d.Cause) > maxWireText {
			return fmt.Errorf("%w: a draft's kind or cause of %d bytes (at most %d)", ErrProtocol, max(len(d.Kind), len(d.Cause)), maxWireText)
		}
	}
	var n byteCounter
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&n)
	if err := enc.Encode(req); err != nil {
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	if limit := callBudget(req.Op); int(n) > limit {
		return fmt.Errorf("%w: a call larger than %d bytes (%s of %d bytes)", ErrProtocol, limit, req.Op, int(n))
	}
	return nil
}

// byteCounter counts what is written to it.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}
