package socketstore_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// chanSink hands each record to a channel.
type chanSink chan []byte

func (c chanSink) Progress(_ string, data []byte, _ int) { c <- data }
func (c chanSink) Ended(string)                          {}

// BenchmarkProgressThroughSocket: from Client.Progress of one record (a
// 100-byte output chunk) to the server's sink holding it, one at a time —
// against the same bytes written to a bare Unix socket and read on the
// other side.
func BenchmarkProgressThroughSocket(b *testing.B) {
	dir := b.TempDir()
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	require.NoError(b, err)
	defer store.Close()
	ln, err := socketstore.Listen(dir)
	require.NoError(b, err)
	defer os.RemoveAll(filepath.Dir(socketstore.Path(dir)))
	got := make(chanSink, 1)
	srv := socketstore.NewServer(store, harness.Hold, socketstore.WithProgress(got))
	go srv.Serve(ln)
	defer srv.Close()
	c, err := socketstore.Dial(context.Background(), dir)
	require.NoError(b, err)
	defer c.Close()
	_, release, err := c.Lease(context.Background(), "t1")
	require.NoError(b, err)
	defer release()
	rec := make([]byte, 100)

	// The baseline: a bare Unix socket, written and read.
	raw := filepath.Join(b.TempDir(), "raw.sock")
	rl, err := net.Listen("unix", raw)
	require.NoError(b, err)
	defer rl.Close()
	read := make(chan struct{}, 1)
	go func() {
		conn, err := rl.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		buf := make([]byte, len(rec))
		for {
			n := 0
			for n < len(buf) {
				m, err := conn.Read(buf[n:])
				if err != nil {
					return
				}
				n += m
			}
			read <- struct{}{}
		}
	}()
	w, err := net.Dial("unix", raw)
	require.NoError(b, err)
	defer w.Close()

	var through, bare time.Duration
	for b.Loop() {
		t0 := time.Now()
		c.Progress("t1", rec)
		<-got
		through += time.Since(t0)
		t0 = time.Now()
		w.Write(rec)
		<-read
		bare += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(through.Nanoseconds())/n/1e3, "progress-µs/op")
	b.ReportMetric(float64(bare.Nanoseconds())/n/1e3, "bare-µs/op")
	b.ReportMetric(float64(through)/float64(bare), "progress/bare")
}
