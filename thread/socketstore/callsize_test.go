package socketstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// TestHugeCallsAreRefusedBeforeTheyAreRead: every call's size is bounded
// before what it announces is read — an append of a draft of 1 GiB or
// of 2^31 drafts, a blob of 1 GiB, 2^31 meta keys, a head whose thread,
// text or data is larger than a call that names things may be, bytes
// sent before the call says what it is, a release of 1 GiB while a
// lease is held: the client gets an error saying so (a protocol error)
// and its connection ends; the server serves the next connection.
func TestHugeCallsAreRefusedBeforeTheyAreRead(t *testing.T) {
	s, _ := serveWithSink(t)
	call := func(fields int, body func(e *msgpack.Encoder)) []byte {
		var b bytes.Buffer
		e := msgpack.NewEncoder(&b)
		e.EncodeMapLen(fields)
		body(e)
		return b.Bytes()
	}
	op := func(e *msgpack.Encoder, name string) {
		e.EncodeString("op")
		e.EncodeString(name)
	}
	cases := map[string][]byte{
		"an append of a draft of 1 GiB": call(3, func(e *msgpack.Encoder) {
			op(e, "append")
			e.EncodeString("t")
			e.EncodeString("t1")
			e.EncodeString("d")
			e.EncodeArrayLen(1)
			e.EncodeMapLen(2)
			e.EncodeString("k")
			e.EncodeString(string(facts.KindUserMessage))
			e.EncodeString("d")
			e.EncodeBytesLen(1 << 30)
		}),
		"an append of 2^31 drafts": call(2, func(e *msgpack.Encoder) {
			op(e, "append")
			e.EncodeString("d")
			e.EncodeArrayLen(1<<31 - 1)
		}),
		"a blob of 1 GiB": call(2, func(e *msgpack.Encoder) {
			op(e, "put_blob")
			e.EncodeString("b")
			e.EncodeBytesLen(1 << 30)
		}),
		"2^31 meta keys": call(2, func(e *msgpack.Encoder) {
			op(e, "put_meta")
			e.EncodeString("k")
			e.EncodeArrayLen(1<<31 - 1)
		}),
		"meta values over the budget": call(2, func(e *msgpack.Encoder) {
			op(e, "put_meta")
			e.EncodeString("vs")
			e.EncodeArrayLen(3)
			e.EncodeBytes(make([]byte, 40<<20))
			e.EncodeBytes(make([]byte, 40<<20))
			e.EncodeBytesLen(40 << 20)
		}),
		"a head of a thread id of 1 GiB": call(2, func(e *msgpack.Encoder) {
			op(e, "head")
			e.EncodeString("t")
			e.EncodeBytesLen(1 << 30)
		}),
		"a has_cause of a cause of 1 MiB": call(2, func(e *msgpack.Encoder) {
			op(e, "has_cause")
			e.EncodeString("x")
			e.EncodeBytesLen(1 << 20)
		}),
		"a read carrying 1 MiB of data": call(2, func(e *msgpack.Encoder) {
			op(e, "read")
			e.EncodeString("b")
			e.EncodeBytesLen(1 << 20)
		}),
		"1 MiB before the call says it is a head": call(2, func(e *msgpack.Encoder) {
			e.EncodeString("b")
			e.EncodeBytes(make([]byte, 1<<20))
			op(e, "head")
		}),
		"a call of 2^31 fields": call(1<<31-1, func(*msgpack.Encoder) {}),
		"a field of its own": call(2, func(e *msgpack.Encoder) {
			op(e, "head")
			e.EncodeString("zz")
			e.EncodeString("x")
		}),
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("unix", socketstore.Path(s.dir))
			require.NoError(t, err)
			defer conn.Close()
			go conn.Write(msg) // the server may hang up before it is all written
			refused(t, conn)
		})
	}

	// A release of 1 GiB while a lease is held: the lease ends, the
	// server does not read it.
	conn, err := net.Dial("unix", socketstore.Path(s.dir))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write(call(3, func(e *msgpack.Encoder) {
		op(e, "lease")
		e.EncodeString("v")
		e.EncodeInt(socketstore.Version)
		e.EncodeString("t")
		e.EncodeString("t9")
	}))
	require.NoError(t, err)
	go conn.Write(call(2, func(e *msgpack.Encoder) {
		op(e, "release")
		e.EncodeString("b")
		e.EncodeBytesLen(1 << 30)
	}))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadAll(conn)
	require.NoError(t, err, "the lease ends and the connection with it")

	// The server goes on: a client appends and reads the thread.
	c := dial(t, s.dir)
	ctx := context.Background()
	h, err := c.Append(ctx, "t1", 0, msg(t, "ingress/fine", "fine"))
	require.NoError(t, err)
	require.EqualValues(t, 1, h.Seq)
	got, err := c.Head(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, h, got)
}

// refused reads what the server answers on conn until it hangs up: one
// answer, a protocol error.
func refused(t *testing.T, conn net.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(conn)
	if !errors.Is(err, syscall.ECONNRESET) { // the server hung up with the call's rest unread
		require.NoError(t, err, "the server waits to read what the call announces")
	}
	var resp struct {
		E struct {
			M string   `msgpack:"m"`
			C []string `msgpack:"c"`
		} `msgpack:"e"`
	}
	require.NoError(t, msgpack.Unmarshal(got, &resp), "an answer before the connection ends: %q", got)
	require.Contains(t, resp.E.C, "protocol", resp.E.M)
	require.Contains(t, resp.E.M, "harness socket protocol error", resp.E.M)
}
