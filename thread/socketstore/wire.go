package socketstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/thread"
)

// Version is the protocol version; a client and a server of different
// versions refuse each other at the first call.
const Version = 1

// SocketName is the socket's file name in the store's runtime directory
// (RunDir). Servers before this one put it in the store directory itself,
// where a sandboxed command of another workspace could reach it: Listen
// removes such a stale socket, and no client dials it.
const SocketName = "serve.sock"

// Path is where the server of the store directory storeDir listens:
// serve.sock in the store's runtime directory (see RunDir), which lies in
// the user's harness runtime directory (sandbox.RuntimeDir), never in the
// store or the workspace. Every process of the user computes the same
// path for the same directory, however it names it (the directory is
// known by its resolved path). Path makes nothing.
func Path(storeDir string) string {
	return filepath.Join(runDir(storeDir), SocketName)
}

// runDir is the store's runtime directory, made or not.
func runDir(storeDir string) string {
	abs, err := filepath.Abs(storeDir)
	if err != nil {
		abs = filepath.Clean(storeDir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(sandbox.RuntimeDirPath(), hex.EncodeToString(sum[:12]))
}

// RunDir returns the runtime directory of the store directory storeDir,
// made if it is missing: a directory of the user's own (mode 0700) in the
// user's harness runtime directory, named after the digest of the store's
// resolved path, where its server keeps its socket (Path), and the
// harness command the file that names the server's address and token and
// the server's log. Every sandbox hides the runtime directory, so no
// command of any workspace reaches them. An unsafe directory (another
// user's, a symbolic link) is an error wrapping sandbox.ErrRuntimeDir.
func RunDir(storeDir string) (string, error) {
	if _, err := sandbox.RuntimeDir(); err != nil {
		return "", err
	}
	d := runDir(storeDir)
	if err := sandbox.PrivateDir(d); err != nil {
		return "", err
	}
	return d, nil
}

// The sentinel errors of this package.
var (
	// ErrNoServer: nobody serves the store directory (no socket, or a
	// socket a process that died left behind).
	ErrNoServer = errors.New("no harness server")
	// ErrServerGone: the server stopped answering in the middle of a call;
	// what the call did is not known (an append may have landed: read the
	// head again).
	ErrServerGone = errors.New("the harness server went away")
	// ErrProtocol: the other side speaks another version, or sent
	// something this side cannot read.
	ErrProtocol = errors.New("harness socket protocol error")
	// ErrRefused: the other side of the connection is not of this user,
	// or not in this process's user namespace (a sandboxed command's).
	ErrRefused = errors.New("refused by the harness server")
	// ErrNoHold: the server was made with no HoldFunc, so it leases no
	// thread to a client.
	ErrNoHold = errors.New("the harness server holds no threads for its clients")
)

// The operations.
const (
	opHello    = "hello"
	opAppend   = "append"
	opRead     = "read"
	opHead     = "head"
	opHasCause = "has_cause"
	opThreads  = "threads"
	opVerify   = "verify"
	opPutBlob  = "put_blob"
	opGetBlob  = "get_blob"
	opHasBlob  = "has_blob"
	opGetMeta  = "get_meta"
	opPutMeta  = "put_meta"
	opLease    = "lease"
	opRelease  = "release"
	opProgress = "progress"
	opWork     = "work"
	opTake     = "take"
	opJobDone  = "job_done"
	opJobLater = "job_later"
)

// request is one call.
type request struct {
	Op      string   `msgpack:"op"`
	Version int      `msgpack:"v,omitempty"`
	Thread  string   `msgpack:"t,omitempty"`
	Seq     uint64   `msgpack:"s,omitempty"` // append: after; read: from
	Text    string   `msgpack:"x,omitempty"` // cause, digest, namespace, page start
	Limit   int      `msgpack:"l,omitempty"`
	Drafts  []draft  `msgpack:"d,omitempty"`
	Data    []byte   `msgpack:"b"`
	Keys    [][]byte `msgpack:"k,omitempty"`
	Values  [][]byte `msgpack:"vs,omitempty"`
	Deletes []bool   `msgpack:"del,omitempty"`
	// Progress is a batch of progress records (see Client.Progress).
	Progress progressBatch `msgpack:"p,omitempty"`
}

// draft is a facts.Draft on the wire.
type draft struct {
	Kind  string `msgpack:"k"`
	Cause string `msgpack:"c"`
	Data  []byte `msgpack:"d"`
}

// response is one answer to a call; a read answers with one per fact and
// a last one with End set.
type response struct {
	Err   *wireError `msgpack:"e,omitempty"`
	Head  *wireHead  `msgpack:"h,omitempty"`
	Heads []wireHead `msgpack:"hs,omitempty"`
	Fact  []byte     `msgpack:"f,omitempty"` // facts.Encode
	Bool  bool       `msgpack:"ok,omitempty"`
	Data  []byte     `msgpack:"b"`
	Text  string     `msgpack:"x,omitempty"`
	End   bool       `msgpack:"end,omitempty"`
	Hello *Info      `msgpack:"hello,omitempty"`
	Jobs  []wireJob  `msgpack:"jobs,omitempty"`
}

// Info is what a server says of itself when a client connects.
type Info struct {
	// Version is the protocol version.
	Version int `msgpack:"version"`
	// PID is the server's process id.
	PID int `msgpack:"pid"`
	// URL is where the server serves HTTP, if it does ("" otherwise); it
	// carries no token.
	URL string `msgpack:"url,omitempty"`
	// Blobs and Meta report whether the held store keeps blobs and a
	// meta space.
	Blobs bool `msgpack:"blobs,omitempty"`
	Meta  bool `msgpack:"meta,omitempty"`
	// Work reports whether the server gives out work (see Client.Work);
	// Drives is how many threads its own process drives at once (0: it
	// drives none), Workers how many workers of other processes took work
	// from it when the client connected (see Work).
	Work    bool `msgpack:"work,omitempty"`
	Drives  int  `msgpack:"drives,omitempty"`
	Workers int  `msgpack:"workers,omitempty"`
}

// wireHead is a thread.Head on the wire.
type wireHead struct {
	Thread string `msgpack:"t"`
	Seq    uint64 `msgpack:"s"`
	Hash   []byte `msgpack:"h"`
	Kind   string `msgpack:"k"`
	At     int64  `msgpack:"a"` // UTC Unix nanoseconds
}

func headOut(h thread.Head) wireHead {
	return wireHead{Thread: h.Thread, Seq: h.Seq, Hash: h.Hash[:], Kind: string(h.Kind), At: h.At.UnixNano()}
}

func (w wireHead) head() thread.Head {
	h := thread.Head{Thread: w.Thread, Seq: w.Seq, Kind: facts.Kind(w.Kind)}
	copy(h.Hash[:], w.Hash)
	if w.At != 0 || w.Seq != 0 {
		h.At = time.Unix(0, w.At).UTC()
	}
	return h
}

// wireError is an error on the wire: its message, the sentinels it
// matches, and the fields of the store's typed errors.
type wireError struct {
	Msg    string    `msgpack:"m"`
	Codes  []string  `msgpack:"c,omitempty"`
	Type   string    `msgpack:"ty,omitempty"` // conflict, duplicate, corrupt
	Thread string    `msgpack:"t,omitempty"`
	Seq    uint64    `msgpack:"s,omitempty"`
	Cause  string    `msgpack:"ca,omitempty"`
	Actual *wireHead `msgpack:"a,omitempty"`
	Inner  string    `msgpack:"i,omitempty"`
}

// errUnsupported: the held store lacks the capability a call needs.
var errUnsupported = errors.New("the held store does not keep this")

// sentinels are the errors a wireError's codes name, in a fixed order.
var sentinels = []struct {
	code string
	err  error
}{
	{"conflict", thread.ErrConflict},
	{"duplicate", thread.ErrDuplicateCause},
	{"not_found", thread.ErrNotFound},
	{"empty", thread.ErrEmptyAppend},
	{"bad_id", thread.ErrBadThreadID},
	{"corrupt", thread.ErrCorrupt},
	{"locked", thread.ErrLocked},
	{"closed", thread.ErrClosed},
	{"lease_lost", thread.ErrLeaseLost},
	{"fact_invalid", facts.ErrInvalid},
	{"payload", facts.ErrPayload},
	{"fact_corrupt", facts.ErrCorrupt},
	{"version", facts.ErrVersion},
	{"not_exist", fs.ErrNotExist},
	{"invalid", fs.ErrInvalid},
	{"canceled", context.Canceled},
	{"deadline", context.DeadlineExceeded},
	{"unsupported", errUnsupported},
	{"protocol", ErrProtocol},
	{"refused", ErrRefused},
	{"no_hold", ErrNoHold},
}

// errOut is err as the server sends it.
func errOut(err error) *wireError {
	w := &wireError{Msg: err.Error()}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			w.Codes = append(w.Codes, s.code)
		}
	}
	var de *thread.DuplicateCauseError
	var ce *thread.ConflictError
	var co *thread.CorruptError
	switch {
	case errors.As(err, &de):
		w.Type, w.Thread, w.Cause, w.Seq = "duplicate", de.Thread, de.Cause, de.Seq
	case errors.As(err, &ce):
		a := headOut(ce.Actual)
		w.Type, w.Thread, w.Seq, w.Actual = "conflict", ce.Thread, ce.Expected, &a
	case errors.As(err, &co):
		w.Type, w.Thread, w.Seq = "corrupt", co.Thread, co.Seq
		if co.Err != nil {
			w.Inner = co.Err.Error()
		}
	}
	return w
}

// err is the error a client returns for w: the store's typed error where
// it was one, else an error with w's message that matches w's sentinels.
func (w *wireError) err() error {
	r := &remoteError{msg: w.Msg}
	for _, c := range w.Codes {
		for _, s := range sentinels {
			if s.code == c {
				r.is = append(r.is, s.err)
			}
		}
	}
	switch w.Type {
	case "duplicate":
		return &thread.DuplicateCauseError{Thread: w.Thread, Cause: w.Cause, Seq: w.Seq}
	case "conflict":
		e := &thread.ConflictError{Thread: w.Thread, Expected: w.Seq}
		if w.Actual != nil {
			e.Actual = w.Actual.head()
		}
		return e
	case "corrupt":
		inner := &remoteError{msg: w.Inner, is: r.is}
		return &thread.CorruptError{Thread: w.Thread, Seq: w.Seq, Err: inner}
	}
	return r
}

// remoteError is an error the server returned: its message, and the
// sentinels it matched there.
type remoteError struct {
	msg string
	is  []error
}

func (e *remoteError) Error() string { return e.msg }

// Is reports whether the error matched target on the server.
func (e *remoteError) Is(target error) bool {
	for _, s := range e.is {
		if s == target {
			return true
		}
	}
	return false
}

// errorf wraps err with what failed where, for a client's caller.
func errorf(op, id string, err error) error {
	if id == "" {
		return fmt.Errorf("%s through the harness server: %w", op, err)
	}
	return fmt.Errorf("%s %s through the harness server: %w", op, id, err)
}
