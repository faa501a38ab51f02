package natsstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Migration says what Migrate did.
type Migration struct {
	// Threads and Facts count what Migrate copied in this call (a call
	// that resumes a migration counts only what was left).
	Threads, Facts int
	// Already is true when the stream was in this layout already.
	Already bool
}

// migrated is called after each thread Migrate copies (tests stop a
// migration halfway with it).
var migrated = func(id string) {}

// Migrate copies the threads of the stream at url (WithStream, WithSubjects
// as for Dial) from layout 1 — a subject per fact, <prefix>.f.<hex id>.<seq>,
// and a marker per cause — into this package's layout, in the same stream,
// and returns what it did. A stream already in this layout is left alone.
//
// First it switches the stream to the new subjects and marks it as being
// migrated (stream metadata harness.schema "2-migrating"): from then on a
// store of the old layout can no longer append (its subjects are not the
// stream's: its publishes reach no stream), and Open refuses the stream
// until the migration is done. Then, thread by thread in id order, it reads
// the old facts, checks their seqs and hash chain, lists the thread in the
// index and publishes its appends as records (the facts byte for byte, so
// seqs, times and hashes stay; the appends as layout 1 tells them apart: a
// fact appended alone, or the facts of a batch, which share a time).
// Last it marks the stream as in the new layout.
//
// Migrate may be stopped at any point and run again: it goes on after the
// last record each thread has in the new layout, checking that it is the
// old log's. A thread whose old log does not check out stops the migration
// with an error naming it; the stream stays marked as being migrated. The
// old messages stay in the stream, unread (it denies deletes and purges);
// to reclaim their space, allow purges for a moment and purge the subjects
// <prefix>.f.> and <prefix>.c.> (nats stream purge --subject).
func Migrate(ctx context.Context, url string, opts ...Option) (Migration, error) {
	o, err := openOptions(opts)
	if err != nil {
		return Migration{}, fmt.Errorf("migrate: %w", err)
	}
	nc, err := connect(ctx, url)
	if err != nil {
		return Migration{}, fmt.Errorf("migrate: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(o.timeout))
	if err != nil {
		return Migration{}, fmt.Errorf("migrate %s: %w", o.stream, err)
	}
	m, err := migrate(ctx, nc, js, o)
	if err != nil {
		return m, fmt.Errorf("migrate %s: %w", o.stream, err)
	}
	return m, nil
}

func migrate(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, o options) (Migration, error) {
	l := layout{prefix: o.prefix}
	stream, err := js.Stream(ctx, o.stream)
	if err != nil {
		return Migration{}, err
	}
	cfg := stream.CachedInfo().Config
	switch schema := cfg.Metadata[schemaKey]; schema {
	case schemaVersion:
		return Migration{Already: true}, nil
	case schemaV1:
		if !slices.Equal(cfg.Subjects, l.v1Subjects()) {
			return Migration{}, fmt.Errorf("stream of layout 1 binds subjects %v, not %v (see WithSubjects)", cfg.Subjects, l.v1Subjects())
		}
		cfg.Subjects = l.streamSubjects()
		cfg.Metadata = maps.Clone(cfg.Metadata)
		cfg.Metadata[schemaKey] = schemaMigrating
		if stream, err = js.UpdateStream(ctx, cfg); err != nil {
			return Migration{}, fmt.Errorf("switch the stream to the new subjects: %w", err)
		}
	case schemaMigrating:
		// A migration stopped halfway: go on.
	default:
		return Migration{}, fmt.Errorf("stream has layout %q (metadata %s); this program migrates layout %s to %s", schema, schemaKey, schemaV1, schemaVersion)
	}
	if err := checkStreamConfig(cfg); err != nil {
		return Migration{}, err
	}
	s, err := openOn(ctx, nc, js, stream, o, time.Now())
	if err != nil {
		return Migration{}, err
	}
	defer s.Close()

	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(l.v1FirstFacts()))
	if err != nil {
		return Migration{}, fmt.Errorf("list the threads of layout 1: %w", err)
	}
	ids := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		id, err := l.v1ThreadOf(subj)
		if err != nil {
			return Migration{}, err
		}
		if err := thread.ValidateID(id); err != nil {
			return Migration{}, fmt.Errorf("subject %s: %w", subj, err)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var m Migration
	for _, id := range ids {
		n, err := s.migrateThread(ctx, id)
		if err != nil {
			return m, fmt.Errorf("thread %s: %w", id, err)
		}
		if n > 0 {
			m.Threads++
			m.Facts += n
		}
		migrated(id)
	}
	cfg = stream.CachedInfo().Config
	cfg.Metadata = maps.Clone(cfg.Metadata)
	cfg.Metadata[schemaKey] = schemaVersion
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return m, fmt.Errorf("mark the stream as migrated: %w", err)
	}
	return m, nil
}

// v1MarkerHeader is the header of a fact of layout 1 appended alone.
const v1MarkerHeader, v1MarkerAfter = "Harness-Marker", "after"

// migrateThread copies the facts of thread id from layout 1 that the new
// layout lacks, and returns how many it copied.
func (s *Store) migrateThread(ctx context.Context, id string) (int, error) {
	st := s.cache.get(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, err := s.refresh(ctx, st); err != nil {
		return 0, err
	}
	done := st.v.head // what the new layout has
	if done.Seq == 0 {
		if err := s.index.add(ctx, id); err != nil {
			return 0, err
		}
	}
	var (
		group    []facts.Fact // the facts of one old append
		frames   []byte
		prev     facts.Hash
		prevAt   int64
		alone    bool // the fact before was appended alone
		copied   int
		causeApp = map[string]uint64{} // cause → seq of the first fact of its append
	)
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		first, last := group[0], group[len(group)-1]
		defer func() { group, frames = group[:0], frames[:0] }()
		if last.Seq <= done.Seq {
			return nil // copied by an earlier run
		}
		if first.Seq != st.v.head.Seq+1 {
			return fmt.Errorf("the new layout ends at seq %d, in the middle of the append of seqs %d to %d", st.v.head.Seq, first.Seq, last.Seq)
		}
		next := thread.Head{Thread: id, Seq: last.Seq, Hash: last.Hash(), Kind: last.Kind, At: last.At}
		expected := st.v.seq
		msgID := id + "/" + first.Cause + "/" + strconv.FormatUint(expected, 10)
		rec, err := s.stage(ctx, id, first.Seq, next, frames, msgID)
		if err != nil {
			return err
		}
		ack, err := s.publish(ctx, &nats.Msg{Subject: s.l.threadSubject(id), Data: rec, Header: nats.Header{
			jetstream.ExpectedLastSubjSeqHeader: []string{strconv.FormatUint(expected, 10)},
			jetstream.MsgIDHeader:               []string{msgID},
		}})
		if err != nil {
			return fmt.Errorf("copy seqs %d to %d: %w", first.Seq, last.Seq, err)
		}
		drafts := make([]facts.Draft, len(group))
		for i, f := range group {
			drafts[i] = facts.Draft{Kind: f.Kind, Cause: f.Cause}
		}
		st.v.appended(ack.Seq, next, drafts)
		copied += len(group)
		return nil
	}
	var seq uint64
	for seq = 1; ; seq++ {
		if err := ctx.Err(); err != nil {
			return copied, err
		}
		m, err := s.getMsg(ctx, s.l.v1FactSubject(id, seq), 0, true)
		if err != nil {
			return copied, err
		}
		if m == nil {
			break
		}
		f, err := facts.DecodeFact(id, m.Data)
		switch {
		case err != nil:
			return copied, &thread.CorruptError{Thread: id, Seq: seq, Err: err}
		case f.Seq != seq:
			return copied, corrupt(id, seq, "the fact under seq %d says seq %d", seq, f.Seq)
		case f.Prev != prev:
			return copied, corrupt(id, seq, "prev is %s, but seq %d hashes to %s", f.Prev, seq-1, prev)
		case seq == done.Seq && f.Hash() != done.Hash:
			return copied, corrupt(id, seq, "the new layout's seq %d is not the old one's", seq)
		}
		isAlone := m.Header.Get(v1MarkerHeader) == v1MarkerAfter
		if seq == 1 || isAlone || alone || f.At.UnixNano() != prevAt {
			if err := flush(); err != nil {
				return copied, err
			}
		}
		if first, ok := causeApp[f.Cause]; ok && (len(group) == 0 || first < group[0].Seq) {
			return copied, corrupt(id, seq, "cause %q was already used at seq %d, by an earlier append", f.Cause, first)
		} else if !ok {
			causeApp[f.Cause] = seq
		}
		group = append(group, f)
		frames = binary.AppendUvarint(frames, uint64(len(m.Data)))
		frames = append(frames, m.Data...)
		prev, prevAt, alone = f.Hash(), f.At.UnixNano(), isAlone
	}
	if err := flush(); err != nil {
		return copied, err
	}
	if done.Seq > seq-1 {
		return copied, fmt.Errorf("the new layout has %d facts, the old one %d", done.Seq, seq-1)
	}
	return copied, nil
}
