package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// A NATS store in the layout of an older version is refused by every
// command, with the command that migrates it; harness migrate copies its
// threads, fact for fact, and the commands read them after.
func TestMigrateAnOldStore(t *testing.T) {
	srv := natstest.Server(t)
	t.Chdir(t.TempDir())
	ctx := context.Background()
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "HARNESS", Subjects: []string{"harness.f.>", "harness.c.>"}, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, DenyDelete: true, DenyPurge: true, AllowAtomicPublish: true,
		Metadata: map[string]string{"harness.schema": "1"},
	})
	require.NoError(t, err)
	// One thread of one fact, as the old layout kept it.
	d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("start"), facts.UserMessage{Text: "Set the cache TTL to 300"})
	require.NoError(t, err)
	f := facts.Fact{Thread: "t1", Seq: 1, Kind: d.Kind, Cause: d.Cause, At: time.Now().UTC().Round(0), Data: d.Data}
	b, err := facts.Encode(f)
	require.NoError(t, err)
	_, err = js.PublishMsg(ctx, &nats.Msg{Subject: fmt.Sprintf("harness.f.%s.1", hex.EncodeToString([]byte("t1"))), Data: b,
		Header: nats.Header{"Harness-Marker": []string{"after"}}})
	require.NoError(t, err)

	harness := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(append(args, "--store", srv.ClientURL()), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, _, stderr := harness("threads")
	require.Equal(t, exitError, code)
	require.Contains(t, stderr, "layout 1")
	require.Contains(t, stderr, "the command: harness migrate, with the same --store")

	code, stdout, stderr := harness("migrate")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "1 thread, 1 fact copied")

	code, stdout, stderr = harness("threads")
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^t1 +resumable +- .*Set the cache TTL to 300$`, stdout)
	code, stdout, stderr = harness("replay", "t1", "--verify")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "verified: 1 fact")
	code, stdout, _ = harness("migrate")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "is in the current layout: nothing to migrate")
}
