package socketstore

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// maxProgressBatchBytes bounds the data of all the records of one
// progress call: a client never holds more than that unsent
// (progressQueuedBytes), so no batch it sends is larger.
const maxProgressBatchBytes = progressQueuedBytes

// progressBatch is a progress call's records on the wire. Its decoder
// reads each length before what it counts and refuses a batch, a record
// or a thread id longer than this package sends, so that a client (of
// the same user, but not trusted to be well made) cannot make the server
// read and keep an unbounded request before looking at it: the
// connection ends instead (ErrProtocol).
type progressBatch []progressItem

// DecodeMsgpack reads a batch as an array of maps {t, d, n}, checking
// every length before it reads what the length counts.
func (b *progressBatch) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*b = nil
		return nil
	}
	if n > maxProgressBatch {
		return fmt.Errorf("%w: a progress call of %d records (at most %d)", ErrProtocol, n, maxProgressBatch)
	}
	out := make(progressBatch, 0, n)
	total := 0
	for range n {
		it, err := decodeProgressItem(dec, maxProgressBatchBytes-total)
		if err != nil {
			return err
		}
		total += len(it.Data)
		out = append(out, it)
	}
	*b = out
	return nil
}

// decodeProgressItem reads one record whose data is at most room bytes
// (and at most maxProgressRecord).
func decodeProgressItem(dec *msgpack.Decoder, room int) (progressItem, error) {
	var it progressItem
	fields, err := dec.DecodeMapLen()
	if err != nil {
		return it, err
	}
	if fields < 0 || fields > 3 {
		return it, fmt.Errorf("%w: a progress record of %d fields", ErrProtocol, fields)
	}
	for range fields {
		key, err := boundedBytes(dec, 1, "a progress record's key")
		if err != nil {
			return it, err
		}
		switch string(key) {
		case "t":
			id, err := boundedBytes(dec, maxWireID, "a progress record's thread")
			if err != nil {
				return it, err
			}
			it.Thread = string(id)
		case "d":
			it.Data, err = boundedBytes(dec, min(room, maxProgressRecord), "a progress record's data")
			if err != nil {
				return it, err
			}
		case "n":
			if it.Dropped, err = dec.DecodeInt(); err != nil {
				return it, err
			}
		default:
			return it, fmt.Errorf("%w: a progress record's field %q", ErrProtocol, key)
		}
	}
	return it, nil
}

// maxWireID bounds a thread id read from the wire: longer than any valid
// one (thread.MaxIDLen), so that the id's own check says why.
const maxWireID = 1 << 10

// boundedBytes reads a string or binary value of at most limit bytes (nil
// reads as nil); its length is checked before its bytes are read.
func boundedBytes(dec *msgpack.Decoder, limit int, what string) ([]byte, error) {
	c, err := dec.PeekCode()
	if err != nil {
		return nil, err
	}
	if c == msgpcode.Nil {
		return nil, dec.DecodeNil()
	}
	n, err := dec.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%w: %s of %d bytes (at most %d)", ErrProtocol, what, n, limit)
	}
	buf := make([]byte, n)
	if err := dec.ReadFull(buf); err != nil {
		return nil, err
	}
	return buf, nil
}
