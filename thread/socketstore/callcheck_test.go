package socketstore_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// TestOversizedCallsFailBeforeTheyAreSent: a call the server would
// refuse as too large — an append of a draft over the append's bound, a
// blob over it, a thread id, a text or meta keys over theirs — fails in
// the client with the error the server would give (ErrProtocol), and not
// one byte of it reaches the server: the connection is not spent on it,
// and the next call goes through.
func TestOversizedCallsFailBeforeTheyAreSent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var after atomic.Int64 // bytes the server got after the hello
	var heads atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				dec := msgpack.NewDecoder(c)
				var hello map[string]any
				if dec.Decode(&hello) != nil {
					return
				}
				b, _ := msgpack.Marshal(map[string]any{"hello": map[string]any{"version": socketstore.Version, "pid": os.Getpid(), "blobs": true, "meta": true}})
				c.Write(b)
				for {
					var req map[string]any
					if err := dec.Decode(&req); err != nil {
						n, _ := io.Copy(io.Discard, c)
						after.Add(n)
						return
					}
					b, _ := msgpack.Marshal(req)
					after.Add(int64(len(b)))
					if req["op"] == "head" {
						heads.Add(1)
						b, _ := msgpack.Marshal(map[string]any{"h": map[string]any{"t": req["t"], "s": 1, "h": make([]byte, 32), "k": "user.message", "a": 0}})
						c.Write(b)
					}
				}
			}()
		}
	}()
	c, err := socketstore.DialAt(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a call sent waits for an answer that never comes
	defer cancel()
	huge := bytes.Repeat([]byte{'x'}, 97<<20)
	cases := map[string]func() error{
		"an append of a draft of 97 MiB": func() error {
			_, err := c.Append(ctx, "t1", 0, facts.Draft{Kind: facts.KindUserMessage, Cause: "ingress/x", Data: huge})
			return err
		},
		"a blob of 97 MiB": func() error { _, err := c.PutBlob(ctx, huge); return err },
		"a thread id of 2 KiB": func() error {
			_, err := c.Head(ctx, string(bytes.Repeat([]byte{'t'}, 2<<10)))
			return err
		},
		"a cause of 70 KiB": func() error {
			_, err := c.HasCause(ctx, "t1", string(bytes.Repeat([]byte{'c'}, 70<<10)))
			return err
		},
		"a meta key of 300 KiB": func() error {
			_, err := c.GetMeta(ctx, "ns", bytes.Repeat([]byte{'k'}, 300<<10))
			return err
		},
		"70,000 meta keys": func() error {
			return c.PutMeta(ctx, "ns", func(yield func([]byte, []byte) bool) {
				for i := range 70000 {
					if !yield([]byte{byte(i), byte(i >> 8), byte(i >> 16)}, []byte{1}) {
						return
					}
				}
			})
		},
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		start := time.Now()
		err := cases[name]()
		require.ErrorIs(t, err, socketstore.ErrProtocol, name)
		require.NotErrorIs(t, err, socketstore.ErrServerGone, name)
		require.Less(t, time.Since(start), 30*time.Second, name) // not the minute of ctx: refused before it is sent
	}
	time.Sleep(100 * time.Millisecond)
	require.Zero(t, after.Load(), "nothing of a refused call reached the server")
	h, err := c.Head(ctx, "t1")
	require.NoError(t, err, "the connection is not spent")
	require.Equal(t, uint64(1), h.Seq)
	require.Equal(t, int64(1), heads.Load())
}
