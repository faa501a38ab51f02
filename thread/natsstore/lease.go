package natsstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/thread"
)

// Leases: one key per leased thread in the bucket <stream>_LEASES, see the
// package comment. A key is written with a message TTL, so the lease runs
// out by itself when its holder stops renewing it, and every write of a
// key expects the revision the writer last saw, so two holders never
// overwrite each other.

// leaseMarkerTTL is how long the bucket keeps the marker a released or
// run-out lease leaves behind: watchers see the marker, then it goes.
const leaseMarkerTTL = time.Minute

// leaseBucket names the leases bucket of a stream.
func leaseBucket(stream string) string { return stream + "_LEASES" }

// bindLeases opens the leases bucket of o's stream, creating it if need be.
func bindLeases(ctx context.Context, js jetstream.JetStream, o options) (jetstream.KeyValue, error) {
	name := leaseBucket(o.stream)
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:         name,
			Description:    "harness thread leases: who resumes which thread of stream " + o.stream,
			History:        1,
			Storage:        jetstream.FileStorage,
			Replicas:       o.replicas,
			LimitMarkerTTL: leaseMarkerTTL,
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, name) // created meanwhile by another store
		}
	}
	if err != nil {
		return nil, err
	}
	if kv, err = leaderGets(ctx, js, kv); err != nil {
		return nil, err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, err
	}
	if st.LimitMarkerTTL() <= 0 {
		return nil, fmt.Errorf("bucket %s has no limit markers, so its keys cannot expire one by one (needs nats-server 2.11 or later and LimitMarkerTTL)", name)
	}
	return kv, nil
}

// holder is the value of a lease's key: who holds it, for people to read.
// The store itself only compares the bytes.
type holder struct {
	Thread string    `json:"thread"`
	Host   string    `json:"host"`
	PID    int       `json:"pid"`
	ID     string    `json:"id"` // random, one per Lease call
	Since  time.Time `json:"since"`
	TTL    string    `json:"ttl"`
}

// describeHolder says who holds a lease, from its value.
func describeHolder(v []byte) string {
	var h holder
	if json.Unmarshal(v, &h) != nil || h.ID == "" {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("process %d on %s (lease %s, since %s)", h.PID, h.Host, h.ID, h.Since.Format(time.RFC3339))
}

// Lease takes thread id's lease, waiting while another holds it; see
// thread.Leaser.
//
// The lease is a key of the leases bucket, created only if absent and
// written with a TTL (WithLeaseTTL). While it waits, Lease watches the key
// and tries again as soon as it is deleted or runs out, and at least every
// third of the TTL. Once it holds the lease, a goroutine renews it every
// third of the TTL, each renewal expecting the revision of the last; held
// is cancelled with a cause matching thread.ErrLeaseLost if a renewal is
// refused (the key is no longer the holder's) or none succeeds within two
// thirds of the TTL of when the last good one was sent — a third before
// the server may let the key go, counted from when the server stored it,
// which is later. The holder checks that deadline every tenth of the TTL
// (at most every 250 ms) by the wall clock as well as the monotonic one,
// so a process resumed after its machine was suspended notices at once,
// not at its next renewal. The holder keeps renewing after ctx is done,
// until release: release must be called, and on error there is nothing to
// release.
//
// release cancels held, then stops the renewals and deletes the key if it
// is still the holder's (so a waiter takes the lease at once): nobody else
// can take the lease while held is live. It may be called more than once,
// and waits for the deletion, at most the store's timeout.
func (s *Store) Lease(ctx context.Context, id string) (held context.Context, release func(), err error) {
	if err := s.begin(ctx, "lease", id); err != nil {
		return nil, nil, err
	}
	// The call stays registered while the lease is held: the renewing
	// goroutine leaves.
	l := &lease{s: s, id: id, key: s.l.encodeID(id), done: make(chan struct{})}
	host, _ := os.Hostname()
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	leaseID := hex.EncodeToString(raw[:])
	l.value, err = json.Marshal(holder{Thread: id, Host: host, PID: os.Getpid(), ID: leaseID, Since: time.Now().UTC().Round(0), TTL: s.leaseTTL.String()})
	if err != nil {
		s.leave()
		return nil, nil, fmt.Errorf("lease %s: %w", id, err)
	}
	if err := l.take(ctx); err != nil {
		s.leave()
		return nil, nil, fmt.Errorf("lease %s: %w", id, err)
	}
	held, l.cancel = context.WithCancelCause(ctx)
	held = context.WithValue(held, heldLease{s, id}, leaseID) // for Progress
	l.stopped, l.stop = context.WithCancel(context.Background())
	go l.hold()
	return held, l.release, nil
}

// lease is one held lease.
type lease struct {
	s       *Store
	id, key string
	value   []byte

	// Owned by take, then by hold.
	rev     uint64    // the revision of the key's last write by the holder
	expires time.Time // when the holder gives up if that was the last renewal

	cancel  context.CancelCauseFunc // cancels held
	stopped context.Context         // done once release is called
	stop    context.CancelFunc
	once    sync.Once
	done    chan struct{} // closed when hold has returned
}

// wrongLastSeq reports whether err is the server refusing a write because
// the key's revision was not the expected one.
func wrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// take creates the lease's key, waiting while another holds it.
func (l *lease) take(ctx context.Context) error {
	s := l.s
	var (
		w   jetstream.KeyWatcher
		who string // the holder, as last seen
	)
	defer func() {
		if w != nil {
			_ = w.Stop()
		}
	}()
	poll := time.NewTimer(s.leaseTTL)
	defer poll.Stop()
	for {
		sent := time.Now()
		rctx, cancel := s.requestContext(ctx)
		rev, err := s.leases.Create(rctx, l.key, l.value, jetstream.KeyTTL(s.leaseTTL))
		cancel()
		switch {
		case err == nil:
			l.rev, l.expires = rev, sent.Add(s.leaseLife())
			return nil
		case !errors.Is(err, jetstream.ErrKeyExists) && !wrongLastSeq(err):
			l.forget()
			if ctx.Err() != nil {
				return waitError(ctx.Err(), who)
			}
			return err
		}
		// Held. Watch the key, and try again when it goes.
		if w == nil {
			if w, err = s.leases.Watch(ctx, l.key); err != nil {
				if ctx.Err() != nil {
					return waitError(ctx.Err(), who)
				}
				return fmt.Errorf("watch: %w", err)
			}
		}
		poll.Reset(s.leaseTTL / 3)
	wait:
		for {
			select {
			case <-ctx.Done():
				return waitError(ctx.Err(), who)
			case <-s.closing.Done():
				return waitError(thread.ErrClosed, who)
			case <-poll.C:
				break wait
			case e, ok := <-w.Updates():
				switch {
				case !ok:
					w = nil // the watch ended: make another
					break wait
				case e == nil: // the key's present state has been seen
					break wait
				case e.Operation() == jetstream.KeyValuePut:
					who = describeHolder(e.Value())
				default: // deleted, or ran out
					break wait
				}
			}
		}
	}
}

func waitError(err error, who string) error {
	if who == "" {
		return fmt.Errorf("waiting for the lease: %w", err)
	}
	return fmt.Errorf("waiting for the lease held by %s: %w", who, err)
}

// leaseLife is how long after sending a write of its key the holder
// counts on the lease: the TTL less a third, so that it gives up well
// before the server, which counts the TTL from when it stored the write,
// lets the key go. Renewals every third of the TTL leave a third to retry
// a failed one.
func (s *Store) leaseLife() time.Duration { return s.leaseTTL - s.leaseTTL/3 }

// leaseCheck is how often the holder checks that its lease has not run
// out, by the wall clock too: the monotonic clock, and so every timer,
// stops while the machine is suspended.
func leaseCheck(ttl time.Duration) time.Duration { return min(ttl/10, 250*time.Millisecond) }

// renewal is the outcome of one renewal.
type renewal struct {
	rev     uint64
	expires time.Time
	err     error
}

// hold renews the lease until release, Close, or the lease is lost. Each
// renewal runs on a goroutine of its own, so that hold keeps checking the
// lease's deadline meanwhile.
func (l *lease) hold() {
	s := l.s
	defer s.leave()
	defer close(l.done)
	every := s.leaseTTL / 3
	retry := max(s.leaseTTL/15, 10*time.Millisecond)
	next := time.NewTimer(every)
	defer next.Stop()
	tick := time.NewTicker(leaseCheck(s.leaseTTL))
	defer tick.Stop()
	var (
		failed  error              // the last renewal's error, if it failed
		running <-chan renewal     // the renewal running, or nil
		cut     context.CancelFunc // cuts it short
	)
	// end cuts the running renewal short and waits for it, keeping its
	// revision if it succeeded, so that giveUp can delete the key.
	end := func() {
		if running == nil {
			return
		}
		cut()
		if r := <-running; r.err == nil {
			l.rev, l.expires = r.rev, r.expires
		}
		running = nil
	}
	for {
		select {
		case <-l.stopped.Done():
		case <-s.closing.Done():
		case <-tick.C:
		case <-next.C:
			// The timer is set only while no renewal runs.
			running, cut = l.startRenewal()
		case r := <-running:
			running = nil
			cut()
			switch {
			case r.err == nil:
				l.rev, l.expires, failed = r.rev, r.expires, nil
				next.Reset(every)
			case errors.Is(r.err, errTaken):
				l.cancel(fmt.Errorf("%w: %s: %w", thread.ErrLeaseLost, l.id, r.err))
				return
			default:
				failed = r.err
				next.Reset(min(retry, max(0, time.Until(l.expires))))
			}
		}
		switch {
		case l.stopped.Err() != nil:
			// release has cancelled held already.
			end()
			l.giveUp()
			return
		case s.closing.Err() != nil:
			// held first: nobody may take the lease while it is live.
			l.cancel(fmt.Errorf("%w: %s: the store was closed: %w", thread.ErrLeaseLost, l.id, thread.ErrClosed))
			end()
			l.giveUp()
			return
		case !l.valid():
			why := "no renewal in time"
			if failed != nil {
				why = failed.Error()
			}
			l.cancel(fmt.Errorf("%w: %s: no renewal succeeded within %s: %s", thread.ErrLeaseLost, l.id, s.leaseLife(), why))
			end()
			l.giveUp() // if a renewal succeeded at the last moment
			return
		}
	}
}

// valid reports whether the holder still counts on the lease, by the
// monotonic clock and by the wall clock (which, unlike the monotonic one,
// counts a suspended machine's sleep).
func (l *lease) valid() bool {
	now := l.s.wall()
	return now.Before(l.expires) && now.Round(0).Before(l.expires.Round(0))
}

// startRenewal renews the lease on a goroutine of its own, within the
// lease's deadline, and returns the channel of its outcome and the
// function that cuts it short.
func (l *lease) startRenewal() (<-chan renewal, context.CancelFunc) {
	ctx, cancel := context.WithDeadline(context.Background(), l.expires)
	ch := make(chan renewal, 1)
	go func(rev uint64) { ch <- l.renew(ctx, rev) }(l.rev)
	return ch, cancel
}

// errTaken: the key is no longer the holder's.
var errTaken = errors.New("the lease's key was deleted, ran out or was taken by another")

// renew writes the key again, expecting revision rev (the holder's last),
// with a new TTL, within ctx. A renewal whose outcome was unknown may have
// been written: if the key still holds the holder's value, renew takes its
// revision and tries once more.
func (l *lease) renew(ctx context.Context, rev uint64) renewal {
	s := l.s
	for attempt := 0; ; attempt++ {
		sent := time.Now()
		ack, err := s.js.PublishMsg(ctx, &nats.Msg{Subject: s.leasePre + l.key, Data: l.value},
			jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(s.leaseTTL))
		if err == nil {
			return renewal{rev: ack.Sequence, expires: sent.Add(s.leaseLife())}
		}
		if !wrongLastSeq(err) {
			return renewal{err: fmt.Errorf("renew: %w", err)}
		}
		got, ok, gerr := l.ours(ctx)
		switch {
		case gerr != nil:
			return renewal{err: fmt.Errorf("renew: %w", gerr)}
		case !ok || attempt > 0:
			return renewal{err: errTaken}
		}
		rev = got
	}
}

// ours returns the revision of the lease's key if it holds the holder's
// value.
func (l *lease) ours(ctx context.Context) (uint64, bool, error) {
	e, err := l.s.leases.Get(ctx, l.key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	return e.Revision(), bytes.Equal(e.Value(), l.value), nil
}

// giveUp deletes the lease's key if it is still the holder's, leaving a
// marker that runs out in its turn. A failure is left alone: the key runs
// out by itself.
func (l *lease) giveUp() {
	if !l.valid() {
		return
	}
	ctx, cancel := context.WithDeadline(context.Background(), l.expires)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, l.s.timeout)
	defer cancel2()
	for attempt := 0; attempt < 2; attempt++ {
		err := l.s.leases.Purge(ctx, l.key, jetstream.LastRevision(l.rev), jetstream.PurgeTTL(leaseMarkerTTL))
		if err == nil || !wrongLastSeq(err) {
			return
		}
		// A renewal whose outcome was unknown may have moved the revision.
		rev, ok, err := l.ours(ctx)
		if err != nil || !ok {
			return
		}
		l.rev = rev
	}
}

// forget deletes the lease's key if a create that failed, its outcome
// unknown (cut short, say), made it the holder's after all. It spends at
// most a second on that: the key runs out by itself.
func (l *lease) forget() {
	ctx, cancel := context.WithTimeout(context.Background(), min(l.s.timeout, time.Second))
	defer cancel()
	if rev, ok, err := l.ours(ctx); err == nil && ok {
		_ = l.s.leases.Purge(ctx, l.key, jetstream.LastRevision(rev), jetstream.PurgeTTL(leaseMarkerTTL))
	}
}

// release gives the lease up; see Lease. held is cancelled first, before
// the key is deleted.
func (l *lease) release() {
	l.once.Do(func() {
		l.cancel(nil)
		l.stop()
		<-l.done
	})
}
