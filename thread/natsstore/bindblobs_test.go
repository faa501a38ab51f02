package natsstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// notYetKnown is a JetStream whose nodes do not know an object store's
// stream for the first few lookups after the bucket was made, as a node
// of a cluster whose group for it is still forming answers.
type notYetKnown struct {
	jetstream.JetStream
	misses atomic.Int32 // lookups of an OBJ_ stream still to answer "not found"
}

func (j *notYetKnown) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	if strings.HasPrefix(name, "OBJ_") && j.misses.Add(-1) >= 0 {
		return nil, jetstream.ErrStreamNotFound
	}
	return j.JetStream.Stream(ctx, name)
}

// A blobs bucket just made, whose stream the answering node does not
// know yet, is asked about again, as a stream without a leader is: the
// store opens (on a slow 3-node cluster, submit failed with "blobs:
// stream not found" right after making the store).
func TestBlobsBucketJustMadeIsAskedAgain(t *testing.T) {
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	real, err := jetstream.New(nc)
	require.NoError(t, err)
	js := &notYetKnown{JetStream: real}
	js.misses.Store(3)
	stream := "BINDBLOBS"
	require.NoError(t, natsstore.BindBlobs(t.Context(), js, stream))
	require.Less(t, js.misses.Load(), int32(0), "every miss was asked again")
	_, err = real.ObjectStore(t.Context(), stream+"_BLOBS")
	require.NoError(t, err)
}
