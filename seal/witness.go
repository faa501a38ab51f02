package seal

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// Entry is one seal: a line of a witness log.
type Entry struct {
	// Prev is the SHA-256 of the witness log's line before, hex; "" on
	// its first line.
	Prev string `json:"prev"`
	// Thread, Seq and Hash are the head sealed: the thread's last fact
	// then, and that fact's hash.
	Thread string     `json:"thread"`
	Seq    uint64     `json:"seq"`
	Hash   facts.Hash `json:"hash"`
	// Root is the hash of the thread's first fact: with Thread, what tells
	// this thread from another of the same id in another store.
	Root facts.Hash `json:"root"`
	// Store names the store the thread was in (its directory, or the
	// server it is kept on).
	Store string `json:"store"`
	// At is when the head was sealed.
	At time.Time `json:"at"`
	// Key is the public key that signed it; Sig the signature of
	// everything above (see Entry.Message).
	Key PublicKey `json:"key"`
	Sig []byte    `json:"sig"`
}

// sealTag starts every message signed, so that a signature of a seal is
// never the signature of anything else.
const sealTag = "harness seal v1\x00"

// Message is what the entry's signature signs: every field but the
// signature, each length-prefixed, after a tag of its own.
func (e Entry) Message() []byte {
	b := make([]byte, 0, 256)
	b = append(b, sealTag...)
	str := func(s string) {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(e.Prev)
	str(e.Thread)
	b = binary.BigEndian.AppendUint64(b, e.Seq)
	b = append(b, e.Hash[:]...)
	b = append(b, e.Root[:]...)
	str(e.Store)
	b = binary.BigEndian.AppendUint64(b, uint64(e.At.UnixNano()))
	str(string(e.Key))
	return b
}

// Signed reports whether the entry's signature is its key's.
func (e Entry) Signed() bool { return e.Key.Verify(e.Message(), e.Sig) }

// Found is an entry where it was read: the witness log and its line.
type Found struct {
	Entry
	Witness string
	Line    int
}

// Witness is a witness log: a file of seals, one JSON entry a line, each
// naming the hash of the line before. It is only ever appended to.
type Witness struct {
	// Path is the file.
	Path string
}

// maxLine bounds a line of a witness log: an entry is a few hundred bytes.
const maxLine = 64 << 10

// Append signs e with k and appends it, synced, and returns it as
// written: its Prev the hash of the last line, its Key k's, At now if
// unset. Processes that append at once take turns (an exclusive lock on
// the file). A seal of the very head the last line seals already, by the
// same key, is not written again: that line is returned.
func (w *Witness) Append(ctx context.Context, e Entry, k Key) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	if err := os.MkdirAll(filepath.Dir(w.Path), 0o700); err != nil {
		return Entry{}, fmt.Errorf("seal: %w", err)
	}
	f, err := os.OpenFile(w.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return Entry{}, fmt.Errorf("seal: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return Entry{}, fmt.Errorf("seal: lock %s: %w", w.Path, err)
	}
	// Closing the file releases the lock.
	last, err := w.tail(f)
	if err != nil {
		return Entry{}, err
	}
	e.Key = k.Public()
	if last != nil {
		var prev Entry
		if err := json.Unmarshal(last, &prev); err != nil {
			return Entry{}, &WitnessError{Path: w.Path, Line: -1, Reason: "its last line is not an entry: " + err.Error()}
		}
		if prev.Thread == e.Thread && prev.Seq == e.Seq && prev.Hash == e.Hash && prev.Root == e.Root && prev.Store == e.Store && prev.Key == e.Key {
			return prev, nil
		}
		e.Prev = lineHash(last)
	} else {
		e.Prev = ""
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	e.At = e.At.UTC()
	e.Sig = k.Sign(e.Message())
	line, err := json.Marshal(e)
	if err != nil {
		return Entry{}, fmt.Errorf("seal: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return Entry{}, fmt.Errorf("seal: write %s: %w", w.Path, err)
	}
	if err := f.Sync(); err != nil {
		return Entry{}, fmt.Errorf("seal: sync %s: %w", w.Path, err)
	}
	if last == nil {
		// The file's first line: its name must last too.
		if err := syncDir(filepath.Dir(w.Path)); err != nil {
			return Entry{}, fmt.Errorf("seal: sync %s: %w", filepath.Dir(w.Path), err)
		}
	}
	return e, nil
}

// tail returns the last whole line of the locked file f (nil for none),
// reading a few KiB from its end (up to maxLine for a long line). A last
// line with no newline is a write torn by a crash: nothing was
// acknowledged of it, and it is cut off before the next append.
func (w *Witness) tail(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	size := fi.Size()
	tooLong := &WitnessError{Path: w.Path, Line: -1, Reason: "its last line is longer than any entry"}
	for window := int64(4 << 10); ; window = maxLine {
		if size == 0 {
			return nil, nil
		}
		start := max(0, size-window)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("seal: read %s: %w", w.Path, err)
		}
		if buf[len(buf)-1] != '\n' {
			cut := bytes.LastIndexByte(buf, '\n') + 1
			if cut == 0 && start > 0 {
				if window < maxLine {
					continue
				}
				return nil, tooLong
			}
			if err := f.Truncate(start + int64(cut)); err != nil {
				return nil, fmt.Errorf("seal: cut the torn line of %s: %w", w.Path, err)
			}
			size, buf = start+int64(cut), buf[:cut]
			if len(buf) == 0 {
				return nil, nil
			}
		}
		body := buf[:len(buf)-1]
		from := bytes.LastIndexByte(body, '\n') + 1
		if from == 0 && start > 0 {
			if window < maxLine {
				continue
			}
			return nil, tooLong
		}
		return body[from:], nil
	}
}

// syncDir syncs the directory dir: a file made in it is there after a
// crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Read returns the entries of the witness log in order, checking its
// chain: each line an entry, each entry's Prev the hash of the line
// before. A missing file has none. On a break it returns the entries
// before it and a *WitnessError naming the line. A last line without a
// newline (a write a crash cut short) is not an entry yet, and is left
// out. Signatures are not checked here (see Check).
func (w *Witness) Read() ([]Found, error) {
	f, err := os.Open(w.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var out []Found
	prev := ""
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return out, &WitnessError{Path: w.Path, Line: n, Reason: "a line longer than any entry"}
		}
		if errors.Is(err, io.EOF) {
			return out, nil // nothing, or a torn last line
		}
		if err != nil {
			return out, fmt.Errorf("witness %s: %w", w.Path, err)
		}
		line = line[:len(line)-1]
		var e Entry
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return out, &WitnessError{Path: w.Path, Line: n, Reason: "not an entry: " + err.Error()}
		}
		if e.Prev != prev {
			return out, &WitnessError{Path: w.Path, Line: n, Reason: "its prev is not the hash of the line before: a line was changed, removed or put in"}
		}
		prev = lineHash(line)
		out = append(out, Found{Entry: e, Witness: w.Path, Line: n})
	}
}
