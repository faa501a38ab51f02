package search

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/seed-7cc7a084/harness/thread"
)

// Status hints: a search by a thread's status (status:) needs each
// thread's status, which only a fold of its log gives (the caller's: the
// index knows no statuses). Folding every thread on every such search is
// costly where many threads have hits; so the caller may leave, beside a
// thread's watermark, the status it read at a head (SetStatusHint), and
// read it back while the index's watermark of the thread is still that
// head (StatusHint). A hint is derived data like a posting: a caller
// confirms, by its own fold, the status of each thread whose hits it
// shows; a wrong hint can only hide a thread's hits, never show them.
//
//	's' thread    the head's seq (8, big-endian), its hash (32), the status

const tableStatus = 's'

func statusKey(id string) []byte { return append([]byte{tableStatus}, id...) }

// SetStatusHint records that thread id had status at head h. It is
// read back only while the index's watermark of the thread is h.
func (ix *Index) SetStatusHint(id string, h thread.Head, status string) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	v := encodeMark(mark{seq: h.Seq, hash: h.Hash})
	if err := ix.db.Set(statusKey(id), append(v, status...), pebble.NoSync); err != nil {
		return fmt.Errorf("search index: status of %s: %w", id, err)
	}
	return nil
}

// StatusHint is the status a caller recorded of thread id at the head
// the index has read it to, if one was recorded there.
func (ix *Index) StatusHint(id string) (string, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return "", false
	}
	get := func(key []byte) []byte {
		v, closer, err := ix.db.Get(key)
		if err != nil {
			return nil // none, or unreadable: no hint
		}
		defer closer.Close()
		return bytes.Clone(v)
	}
	m := get(markKey(id))
	s := get(statusKey(id))
	n := len(encodeMark(mark{}))
	if m == nil || len(s) <= n || !bytes.Equal(m[:min(n, len(m))], s[:n]) {
		return "", false
	}
	return string(s[n:]), true
}
