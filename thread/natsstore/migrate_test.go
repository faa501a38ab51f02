package natsstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// v1Store writes threads in layout 1, as the store before this layout did:
// the stream binds <prefix>.f.> and <prefix>.c.>; each fact is a message
// of its own on <prefix>.f.<hex id>.<seq>; a fact appended alone carries
// Harness-Marker: after, the facts of a batch share one time; each cause
// has a marker on <prefix>.c.<hex id>.<sha256 of the cause>.
type v1Store struct {
	js     jetstream.JetStream
	prefix string
	at     time.Time
}

func newV1Store(t *testing.T, srv *server.Server, name, prefix string) *v1Store {
	t.Helper()
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: name, Subjects: []string{prefix + ".f.>", prefix + ".c.>"}, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, DenyDelete: true, DenyPurge: true, AllowAtomicPublish: true,
		Metadata: map[string]string{"harness.schema": "1"},
	})
	require.NoError(t, err)
	return &v1Store{js: js, prefix: prefix, at: time.Now().UTC().Round(0)}
}

// write appends the appends (each a list of drafts) to thread id, which
// must be new, and returns its facts.
func (v *v1Store) write(t *testing.T, id string, appends ...[]facts.Draft) []facts.Fact {
	t.Helper()
	ctx := context.Background()
	hexID := hex.EncodeToString([]byte(id))
	var (
		out  []facts.Fact
		prev facts.Hash
		seen = map[string]bool{}
	)
	for _, ds := range appends {
		v.at = v.at.Add(time.Millisecond)
		for _, d := range ds {
			f := facts.Fact{Thread: id, Seq: uint64(len(out) + 1), Kind: d.Kind, Cause: d.Cause, At: v.at, Data: d.Data, Prev: prev}
			b, err := facts.Encode(f)
			require.NoError(t, err)
			m := &nats.Msg{Subject: fmt.Sprintf("%s.f.%s.%d", v.prefix, hexID, f.Seq), Data: b, Header: nats.Header{}}
			if len(ds) == 1 {
				m.Header.Set("Harness-Marker", "after")
			}
			_, err = v.js.PublishMsg(ctx, m)
			require.NoError(t, err)
			if !seen[d.Cause] {
				seen[d.Cause] = true
				sum := sha256.Sum256([]byte(d.Cause))
				_, err = v.js.Publish(ctx, fmt.Sprintf("%s.c.%s.%x", v.prefix, hexID, sum), []byte("marker"))
				require.NoError(t, err)
			}
			out = append(out, f)
			prev = f.Hash()
		}
	}
	return out
}

// v1Threads writes the threads the migration tests copy, and returns
// their facts by id.
func v1Threads(t *testing.T, v *v1Store) map[string][]facts.Fact {
	t.Helper()
	var singles [][]facts.Draft
	for i := range 10 {
		singles = append(singles, []facts.Draft{note(t, fmt.Sprintf("ingress/%d", i))})
	}
	return map[string][]facts.Fact{
		"a.b":    v.write(t, "a.b", singles...),
		"batch":  v.write(t, "batch", []facts.Draft{note(t, "x"), note(t, "y"), note(t, "x")}, []facts.Draft{note(t, "z")}, notes(t, "w", 3, 10)),
		"big":    v.write(t, "big", []facts.Draft{note(t, "start")}, notes(t, "fork", 3000, 500)),
		"single": v.write(t, "single", []facts.Draft{note(t, "only")}),
	}
}

// requireMigrated checks that s holds want's threads, fact for fact, that
// they verify, and that they go on.
func requireMigrated(t *testing.T, s *natsstore.Store, want map[string][]facts.Fact) {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for id, fs := range want {
		ids = append(ids, id)
		require.Equal(t, fs, readAll(t, s, id), id)
		require.NoError(t, s.Verify(ctx, id))
		h, err := s.Head(ctx, id)
		require.NoError(t, err)
		last := fs[len(fs)-1]
		require.Equal(t, last.Hash(), h.Hash)
		for _, f := range fs {
			_, err := s.Append(ctx, id, h.Seq, note(t, f.Cause))
			require.ErrorIs(t, err, thread.ErrDuplicateCause, "%s: %s", id, f.Cause)
		}
		h, err = s.Append(ctx, id, h.Seq, note(t, "after the migration"))
		require.NoError(t, err)
		require.EqualValues(t, len(fs)+1, h.Seq)
		require.NoError(t, s.Verify(ctx, id))
	}
	slices.Sort(ids)
	require.Equal(t, ids, listAll(t, s, 2))
}

// TestMigrate: a stream of layout 1 is refused by Open with a message
// naming the migration; Migrate copies every thread, fact for fact; the
// old store can no longer append; a second Migrate has nothing to do.
func TestMigrate(t *testing.T) {
	srv := defaultServer(t)
	ctx := context.Background()
	name, opts := freshNamed()
	prefix := "t" + name[1:]
	v := newV1Store(t, srv, name, prefix)
	want := v1Threads(t, v)

	_, err := natsstore.Dial(ctx, srv.ClientURL(), opts...)
	require.ErrorIs(t, err, natsstore.ErrOldLayout)
	require.ErrorContains(t, err, "layout 1")
	require.ErrorContains(t, err, "natsstore.Migrate")

	m, err := natsstore.Migrate(ctx, srv.ClientURL(), opts...)
	require.NoError(t, err)
	require.Equal(t, natsstore.Migration{Threads: 4, Facts: 10 + 7 + 3001 + 1}, m)

	// The old layout's writers publish to subjects no stream binds now.
	_, err = v.js.Publish(ctx, fmt.Sprintf("%s.f.%s.11", prefix, hex.EncodeToString([]byte("a.b"))), []byte("late"))
	require.ErrorIs(t, err, jetstream.ErrNoStreamResponse)

	s := dial(t, srv, opts...)
	requireMigrated(t, s, want)

	m, err = natsstore.Migrate(ctx, srv.ClientURL(), opts...)
	require.NoError(t, err)
	require.True(t, m.Already)
}

// TestMigrateResumes: a migration stopped after its first thread leaves
// the stream refused by Open as being migrated; run again, it copies the
// rest and the result is as if it had not stopped.
func TestMigrateResumes(t *testing.T) {
	srv := defaultServer(t)
	name, opts := freshNamed()
	v := newV1Store(t, srv, name, "t"+name[1:])
	want := v1Threads(t, v)

	ctx, cancel := context.WithCancel(context.Background())
	natsstore.AfterMigrating(func(string) { cancel() })
	t.Cleanup(func() { natsstore.AfterMigrating(func(string) {}) })
	_, err := natsstore.Migrate(ctx, srv.ClientURL(), opts...)
	require.ErrorIs(t, err, context.Canceled)
	natsstore.AfterMigrating(func(string) {})

	_, err = natsstore.Dial(context.Background(), srv.ClientURL(), opts...)
	require.ErrorIs(t, err, natsstore.ErrOldLayout)
	require.ErrorContains(t, err, "being migrated")

	m, err := natsstore.Migrate(context.Background(), srv.ClientURL(), opts...)
	require.NoError(t, err)
	require.Equal(t, 3, m.Threads, "the thread copied before is not copied again")
	requireMigrated(t, dial(t, srv, opts...), want)
}

// TestMigrateRefusesABrokenLog: an old thread whose hash chain is broken
// stops the migration, naming the thread and the seq, and nothing opens
// the stream until it is dealt with.
func TestMigrateRefusesABrokenLog(t *testing.T) {
	srv := defaultServer(t)
	ctx := context.Background()
	name, opts := freshNamed()
	prefix := "t" + name[1:]
	v := newV1Store(t, srv, name, prefix)
	v.write(t, "good", []facts.Draft{note(t, "a")})
	fs := v.write(t, "broken", []facts.Draft{note(t, "a")})
	bad := facts.Fact{Thread: "broken", Seq: 2, Kind: facts.KindUserMessage, Cause: "b", At: time.Now().UTC(), Data: fs[0].Data, Prev: facts.Hash{1}}
	b, err := facts.Encode(bad) // Prev is not the hash of seq 1
	require.NoError(t, err)
	_, err = v.js.Publish(ctx, fmt.Sprintf("%s.f.%s.2", prefix, hex.EncodeToString([]byte("broken"))), b)
	require.NoError(t, err)

	_, err = natsstore.Migrate(ctx, srv.ClientURL(), opts...)
	require.ErrorIs(t, err, thread.ErrCorrupt)
	require.ErrorContains(t, err, "thread broken")
	require.ErrorContains(t, err, "seq 2")
	_, err = natsstore.Dial(ctx, srv.ClientURL(), opts...)
	require.ErrorIs(t, err, natsstore.ErrOldLayout)
}
