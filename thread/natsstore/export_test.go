package natsstore

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// ThreadSubject is the subject of id's records in s's stream.
func ThreadSubject(s *Store, id string) string { return s.l.threadSubject(id) }

// ConnOptions returns the options of the connection s uses.
func ConnOptions(s *Store) nats.Options { return s.nc.Opts }

// SetWallClock makes the holders of s's leases read the wall clock from
// now. Call it before Lease.
func SetWallClock(s *Store, now func() time.Time) { s.wall = now }

// SetProgressWait sets how long a follower of s keeps a progress
// record of a lease it has not seen yet. Call it before FollowProgress.
func SetProgressWait(s *Store, d time.Duration) { s.progressWait = d }

// SetLeafSize sets how many ids a leaf of s's thread index holds.
func SetLeafSize(s *Store, n int) { s.index.leafSize = n }

// EncodeRecord returns the record of an append of drafts to id after head
// at time at, as Append would publish it when it fits one message, and
// the head after it.
func EncodeRecord(id string, head thread.Head, drafts []facts.Draft, at time.Time) ([]byte, thread.Head, error) {
	body, next, err := frames(id, head, drafts, at)
	if err != nil {
		return nil, thread.Head{}, err
	}
	return encodeRecord(head.Seq+1, next, body, nil), next, nil
}

// LoseAnswers makes s drop the server's answers to its next n publishes,
// as if they were lost on the way: the publish is stored, its caller does
// not hear so.
func LoseAnswers(s *Store, n int64) { s.loseAnswers.Store(n) }

// IndexReads returns how many keys s has read from its thread index.
func IndexReads(s *Store) int64 { return s.index.reads.Load() }

// IndexAdd lists id in s's thread index, as an append of its first fact
// does before storing it.
func IndexAdd(ctx context.Context, s *Store, id string) error { return s.index.add(ctx, id) }

// StageSubject is the subject of the parts of id's large appends.
func StageSubject(s *Store, id string) string { return s.l.stageSubject(id) }

// SameStream returns the options of another store on s's stream.
func SameStream(s *Store) []Option { return []Option{WithStream(s.name), WithSubjects(s.l.prefix)} }

// AfterMigrating makes Migrate call f after each thread it copies.
func AfterMigrating(f func(id string)) { migrated = f }

// StallConsumers makes the consumers of s's reads stall once they are n
// stream seqs past where they started (0: never).
func StallConsumers(s *Store, n int64) { s.stallAfter.Store(n) }

// UntilLeader is untilLeader, for the tests of how it tries again.
func UntilLeader(ctx context.Context, wait time.Duration, f func(context.Context) (int, error)) (int, error) {
	return untilLeader(ctx, time.Now(), wait, "test", f)
}

// NoAnswerYet is an error untilLeader takes as transient.
var NoAnswerYet = errNoAnswerYet

// LeaderGets is leaderGets, for the test of a binding made while direct
// gets were on.
var LeaderGets = leaderGets

// BindBlobs binds (or makes) the blobs bucket of stream through js as
// Open does, asking again while no answer says it is there.
func BindBlobs(ctx context.Context, js jetstream.JetStream, stream string) error {
	o, err := openOptions([]Option{WithStream(stream)})
	if err != nil {
		return err
	}
	_, err = untilLeader(ctx, time.Now(), o.openWait, "bucket "+blobBucket(stream), func(ctx context.Context) (jetstream.ObjectStore, error) {
		return bindBlobs(ctx, js, o)
	})
	return err
}
