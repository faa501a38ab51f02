package socketstore_test

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// TestHugeProgressCallIsRefusedBeforeItIsRead: a client of the same user
// that claims a progress call larger than any the package sends (a
// record of 1 GiB, a batch of 2^31 records, a thread id of 1 GiB, more
// data in one batch than a client ever queues) has its connection closed
// as soon as the length is read, with an error that says why — the server does not wait for, read or
// keep what the length announces. A well-made call on the next
// connection is still taken.
func TestHugeProgressCallIsRefusedBeforeItIsRead(t *testing.T) {
	s, k := serveWithSink(t)
	c := dial(t, s.dir)
	_, release, err := c.Lease(context.Background(), "t1")
	require.NoError(t, err)
	defer release()

	record := func(e *msgpack.Encoder, id string, data func()) {
		e.EncodeMapLen(2)
		e.EncodeString("t")
		e.EncodeString(id)
		e.EncodeString("d")
		data()
	}
	call := func(records int, body func(e *msgpack.Encoder)) []byte {
		var b bytes.Buffer
		e := msgpack.NewEncoder(&b)
		e.EncodeMapLen(2)
		e.EncodeString("op")
		e.EncodeString("progress")
		e.EncodeString("p")
		e.EncodeArrayLen(records)
		body(e)
		return b.Bytes()
	}
	cases := map[string][]byte{
		"a record of 1 GiB": call(1, func(e *msgpack.Encoder) {
			record(e, "t1", func() { e.EncodeBytesLen(1 << 30) })
		}),
		"2^31 records": call(1<<31-1, func(e *msgpack.Encoder) {
			record(e, "t1", func() { e.EncodeBytes([]byte("x")) })
		}),
		"a thread id of 1 GiB": call(1, func(e *msgpack.Encoder) {
			e.EncodeMapLen(1)
			e.EncodeString("t")
			e.EncodeBytesLen(1 << 30)
		}),
		"a batch over the client's queue": call(8, func(e *msgpack.Encoder) {
			for range 5 {
				record(e, "t1", func() { e.EncodeBytes(make([]byte, 250<<10)) })
			}
			record(e, "t1", func() { e.EncodeBytesLen(250 << 10) })
		}),
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("unix", socketstore.Path(s.dir))
			require.NoError(t, err)
			defer conn.Close()
			go conn.Write(msg) // the length, not what it counts
			refused(t, conn)
		})
	}
	got, _ := k.seen()
	require.Empty(t, got, "nothing of a refused call reaches the sink")

	c.Progress("t1", []byte("fine"))
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 1 && got[0] == "t1 fine 0" }, 20*time.Second, 5*time.Millisecond)
}
