package socketstore

import (
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// # A call's size
//
// The server reads a call through a budget (callReader): the bytes it
// may read of one call are counted, and each length on the wire is
// checked against what is left before what it counts is read or any
// room is made for it. The budget is maxCallBytes until the call names
// its operation (its first field, as a client sends it), then that
// operation's (callBudget): a head, a read or a lease is a few names,
// a progress call its bounded batch; an append or a blob may carry a
// large fact or file. A call over its budget is answered with an error
// that says so (ErrProtocol) and the connection ends; the server goes
// on. A same-user client is not trusted to be well made.

const (
	// maxCallBytes bounds any call: an append of a fact as large as one
	// a JSON Lines import takes (facts.MaxLineLen), a blob, a batch of
	// meta values.
	maxCallBytes = 96 << 20
	// maxSmallCall bounds a call that names things only (a thread, a
	// cause, a digest, a page's start, a meta key).
	maxSmallCall = 256 << 10
	// maxCallItems bounds the drafts of an append and the keys of a
	// put_meta; with the budget, it bounds the room made before the
	// items are read.
	maxCallItems = 1 << 16
	// maxWireText bounds a call's text (a cause, a digest, a namespace,
	// a page's start) and a draft's kind and cause.
	maxWireText = 64 << 10
)

// callBudget is how many bytes a call of op may take in all.
func callBudget(op string) int {
	switch op {
	case opAppend, opPutBlob, opPutMeta:
		return maxCallBytes
	case opProgress:
		return maxProgressBatchBytes + maxProgressBatch*(maxWireID+64) + 1024
	}
	return maxSmallCall
}

// callReader is the connection's reader as the decoder reads it, with
// the count of the bytes read of the call now being read and its limit.
type callReader struct {
	r     io.ByteScanner
	rd    io.Reader
	n     int
	limit int
}

// start begins a call: nothing read yet, at most limit bytes.
func (c *callReader) start(limit int) { c.n, c.limit = 0, limit }

// left is how many bytes the call may still take.
func (c *callReader) left() int { return c.limit - c.n }

// tooLarge is the error of a call over its budget.
func (c *callReader) tooLarge() error {
	return fmt.Errorf("%w: a call larger than %d bytes", ErrProtocol, c.limit)
}

func (c *callReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, c.tooLarge()
	}
	if len(p) > c.limit-c.n {
		p = p[:c.limit-c.n]
	}
	n, err := c.rd.Read(p)
	c.n += n
	return n, err
}

func (c *callReader) ReadByte() (byte, error) {
	if c.n >= c.limit {
		return 0, c.tooLarge()
	}
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (c *callReader) UnreadByte() error {
	if err := c.r.UnreadByte(); err != nil {
		return err
	}
	c.n--
	return nil
}

// decodeRequest reads one call from dec, whose reader is cr, within its
// budget: limit, then, once the operation is named, that operation's if
// it is less. Every length is checked before what it counts is read;
// no room is made for more than the budget has left.
func decodeRequest(dec *msgpack.Decoder, cr *callReader, limit int) (request, error) {
	var req request
	cr.start(limit)
	fields, err := dec.DecodeMapLen()
	if err != nil {
		return req, err
	}
	if fields < 0 || fields > 16 {
		return req, fmt.Errorf("%w: a call of %d fields", ErrProtocol, fields)
	}
	for range fields {
		key, err := boundedBytes(dec, 8, "a call's field name")
		if err != nil {
			return req, err
		}
		switch string(key) {
		case "op":
			op, err := boundedBytes(dec, 32, "a call's operation")
			if err != nil {
				return req, err
			}
			req.Op = string(op)
			cr.limit = min(cr.limit, callBudget(req.Op))
			if cr.n > cr.limit {
				return req, cr.tooLarge()
			}
		case "v":
			req.Version, err = dec.DecodeInt()
		case "t":
			req.Thread, err = boundedString(dec, maxWireID, "a call's thread")
		case "s":
			req.Seq, err = dec.DecodeUint64()
		case "x":
			req.Text, err = boundedString(dec, maxWireText, "a call's text")
		case "l":
			req.Limit, err = dec.DecodeInt()
		case "d":
			req.Drafts, err = decodeDrafts(dec, cr)
		case "b":
			req.Data, err = budgetBytes(dec, cr, "a call's data")
		case "k":
			req.Keys, err = decodeByteList(dec, cr, "a meta key")
		case "vs":
			req.Values, err = decodeByteList(dec, cr, "a meta value")
		case "del":
			req.Deletes, err = decodeBoolList(dec)
		case "p":
			err = req.Progress.DecodeMsgpack(dec)
		default:
			err = fmt.Errorf("%w: a call's field %q", ErrProtocol, key)
		}
		if err != nil {
			return req, err
		}
	}
	return req, nil
}

// itemsLen reads an array's length (nil reads as -1), at most
// maxCallItems.
func itemsLen(dec *msgpack.Decoder, what string) (int, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return 0, err
	}
	if n > maxCallItems {
		return 0, fmt.Errorf("%w: %d of %s (at most %d)", ErrProtocol, n, what, maxCallItems)
	}
	return n, nil
}

// decodeDrafts reads an append's drafts, each a map {k, c, d}.
func decodeDrafts(dec *msgpack.Decoder, cr *callReader) ([]draft, error) {
	n, err := itemsLen(dec, "drafts")
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]draft, 0, min(n, 64))
	for range n {
		fields, err := dec.DecodeMapLen()
		if err != nil {
			return nil, err
		}
		if fields < 0 || fields > 3 {
			return nil, fmt.Errorf("%w: a draft of %d fields", ErrProtocol, fields)
		}
		var d draft
		for range fields {
			key, err := boundedBytes(dec, 1, "a draft's field name")
			if err != nil {
				return nil, err
			}
			switch string(key) {
			case "k":
				d.Kind, err = boundedString(dec, maxWireText, "a draft's kind")
			case "c":
				d.Cause, err = boundedString(dec, maxWireText, "a draft's cause")
			case "d":
				d.Data, err = budgetBytes(dec, cr, "a draft's data")
			default:
				err = fmt.Errorf("%w: a draft's field %q", ErrProtocol, key)
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// decodeByteList reads an array of byte strings (nil elements kept).
func decodeByteList(dec *msgpack.Decoder, cr *callReader, what string) ([][]byte, error) {
	n, err := itemsLen(dec, what+"s")
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([][]byte, 0, min(n, 64))
	for range n {
		b, err := budgetBytes(dec, cr, what)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// decodeBoolList reads an array of booleans.
func decodeBoolList(dec *msgpack.Decoder) ([]bool, error) {
	n, err := itemsLen(dec, "deletes")
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]bool, 0, min(n, 64))
	for range n {
		b, err := dec.DecodeBool()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// boundedString reads a string of at most limit bytes.
func boundedString(dec *msgpack.Decoder, limit int, what string) (string, error) {
	b, err := boundedBytes(dec, limit, what)
	return string(b), err
}

// budgetBytes reads a byte string no longer than the call's budget has
// left, making room as the bytes arrive (a length that lies costs no
// more than the bytes sent).
func budgetBytes(dec *msgpack.Decoder, cr *callReader, what string) ([]byte, error) {
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
	if n < 0 || n > cr.left() {
		return nil, fmt.Errorf("%w: %s of %d bytes (the call may take at most %d)", ErrProtocol, what, n, cr.limit)
	}
	const step = 1 << 20
	buf := make([]byte, 0, min(n, step))
	for len(buf) < n {
		k := min(n-len(buf), step)
		buf = append(buf, make([]byte, k)...)
		if err := dec.ReadFull(buf[len(buf)-k:]); err != nil {
			return nil, err
		}
	}
	return buf, nil
}
