package thread

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// Threads all in one shard, more than a shard's share of the hot cache:
// the shard starts over again and again while appends run, some with a
// wrong `after`, some cancelled while waiting. Each owned thread's head is
// known exactly by its owner: a right `after` must succeed, a wrong one must
// conflict. Shared threads: successes must add up to the final head.
func TestShardStartingOverKeepsConditionalAppendsRight(t *testing.T) {
	s := openInternal(t)
	want := uint64(0)
	var ids []string
	for i := 0; len(ids) < maxHotThreads/hotShards+204; i++ {
		id := fmt.Sprintf("t%d", i)
		if maphash.String(lockSeed, id)%hotShards == want {
			ids = append(ids, id)
		}
	}
	draft := func(c string) facts.Draft {
		d, err := facts.NewDraft(facts.KindUserMessage, c, facts.UserMessage{Text: c})
		require.NoError(t, err)
		return d
	}
	shared := ids[len(ids)-4:]
	ids = ids[:len(ids)-4]
	const owners = 8
	rounds := 6
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for o := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(o), 9))
			heads := map[string]uint64{}
			for r := range rounds {
				for i := o; i < len(ids); i += owners {
					id := ids[i]
					h := heads[id]
					after := h
					bad := r > 0 && rng.IntN(4) == 0
					if bad {
						after = h + 1 + uint64(rng.IntN(2))
						if h > 0 && rng.IntN(2) == 0 {
							after = h - 1
						}
					}
					got, err := s.Append(context.Background(), id, after, draft(fmt.Sprintf("c/%d/%d", r, i)))
					var ce *ConflictError
					switch {
					case bad && !errors.As(err, &ce):
						errs <- fmt.Errorf("%s after %d (head %d): want conflict, got %v %+v", id, after, h, err, got)
						return
					case !bad && err != nil:
						errs <- fmt.Errorf("%s after %d: %v", id, after, err)
						return
					case !bad:
						heads[id] = got.Seq
					}
				}
			}
		}()
	}
	// Shared threads with retries and cancelled waits.
	var mu sync.Mutex
	wins := map[string]int{}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 60 {
				id := shared[k%len(shared)]
				ctx, cancel := context.WithCancel(context.Background())
				if k%5 == 0 {
					go func() { time.Sleep(time.Microsecond); cancel() }()
				}
				for try := 0; ; try++ {
					if try > 10000 {
						errs <- fmt.Errorf("%s: conflicts forever", id)
						break
					}
					h, err := s.Head(context.Background(), id)
					after := h.Seq
					if errors.Is(err, ErrNotFound) {
						after = 0
					} else if err != nil {
						errs <- err
						cancel()
						return
					}
					_, err = s.Append(ctx, id, after, draft(fmt.Sprintf("s/%d/%d", w, k)))
					var ce *ConflictError
					if errors.As(err, &ce) {
						continue
					}
					if err == nil {
						mu.Lock()
						wins[id]++
						mu.Unlock()
					} else if !errors.Is(err, context.Canceled) {
						errs <- err
					}
					break
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// shared ids are also owned: owner appends count too; check via Verify.
	for _, id := range ids {
		require.NoError(t, s.Verify(context.Background(), id), id)
	}
	for _, id := range shared {
		require.NoError(t, s.Verify(context.Background(), id), id)
		h, err := s.Head(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, uint64(wins[id]), h.Seq, id)
	}
	n := 0
	for i := range lockShards {
		sh := &s.locks.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	require.Zero(t, n, "lock entries left")
}
