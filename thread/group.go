package thread

import (
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// groupCommit commits the batches of appends that arrive together as one
// synced Pebble batch: the first to arrive leads, taking every batch that
// arrived before it starts (its own first), reading the disk's free space
// once for all of them, and committing them in one batch; the rest wait
// and take the result. Whoever arrives while a group commits waits for the
// next group, led by the first of them.
//
// Each append is still all or nothing, and still refused with nothing
// written when the disk is short of room, by a reading taken after it
// asked; a group is all or nothing too, which asks nothing more of the
// appends in it (they are to different threads: each holds its thread's
// lock). Pebble's own group commit already shares one WAL sync among
// concurrent batches; this also shares the free-space reading and the
// rest of a commit's work, which 64 concurrent writers otherwise pay 64
// times.
type groupCommit struct {
	mu      sync.Mutex // guards queue, spare and leading
	queue   []*groupMember
	spare   []*groupMember // a group's slice, emptied, for the next queue
	leading bool           // a leader is committing a group

	// batch is the batch the last group of more than one was committed
	// in, emptied, for the next one. Only the leader uses it (being the
	// leader guards it): it takes it, and puts it back only after a
	// commit that succeeded, so a batch that failed or panicked half
	// way is never used again. Kept, its buffer has room for a group
	// already, where a batch from Pebble's pool grew by doubling as
	// each member's batch was applied to it.
	batch *pebble.Batch
}

// groupMember is one append's batch waiting in a group. Members are
// reused (members): one is told its answer, or the lead, by a token sent
// on done, which it takes before it is put back, so a member put back
// holds none.
type groupMember struct {
	b    *pebble.Batch
	done chan struct{} // receives a token when err is set, or when lead is
	err  error
	lead bool // this member is to lead the next group
}

// members holds the members of the appends that have ended, for the next
// ones: an append makes no member and no channel of its own.
var members = sync.Pool{New: func() any { return &groupMember{done: make(chan struct{}, 1)} }}

// putMember puts m back in members, forgetting its batch and answer.
func putMember(m *groupMember) {
	m.b, m.err, m.lead = nil, nil, false
	members.Put(m)
}

// commit commits b with the batches of the appends that arrive with it,
// after room says there is room to write. It returns the group's error:
// nil when b is durable.
func (g *groupCommit) commit(db *pebble.DB, room func() error, b *pebble.Batch) error {
	m := members.Get().(*groupMember)
	m.b = b
	g.mu.Lock()
	g.queue = append(g.queue, m)
	if g.leading {
		g.mu.Unlock()
		<-m.done
		if !m.lead {
			err := m.err
			putMember(m)
			return err
		}
		g.mu.Lock() // handed the lead: the queue holds m first
	}
	g.leading = true
	group := g.queue
	g.queue, g.spare = g.spare[:0], nil
	g.mu.Unlock()

	// Whatever happens to the commit (a panic too), the group gets its
	// answer and the lead passes on. Once told, a member is its
	// append's again: the leader touches it no more.
	err := errGroupAbandoned
	defer func() {
		for _, o := range group[1:] {
			o.err = err
			o.done <- struct{}{}
		}
		g.handOff(group)
		putMember(m) // group[0]: no one else holds it
	}()
	err = g.commitGroup(db, room, group)
	return err
}

// handOff gives the lead to the first who came while a group committed,
// or gives it up; the group's slice, told and done with, is kept for a
// later queue (an append allocates none).
func (g *groupCommit) handOff(group []*groupMember) {
	g.mu.Lock()
	clear(group)
	g.spare = group[:0]
	if len(g.queue) == 0 {
		g.leading = false
		g.mu.Unlock()
		return
	}
	next := g.queue[0]
	g.mu.Unlock()
	next.lead = true
	next.done <- struct{}{}
}

// commitGroup commits the batches of group as one synced batch, after
// room says there is room: a group of one commits its batch, a larger
// group the batch g keeps, with every member's batch applied to it.
func (g *groupCommit) commitGroup(db *pebble.DB, room func() error, group []*groupMember) error {
	if err := room(); err != nil {
		return err
	}
	if len(group) == 1 {
		return group[0].b.Commit(pebble.Sync)
	}
	b := g.batch
	g.batch = nil
	if b == nil {
		b = db.NewBatch()
	}
	for _, o := range group {
		if err := b.Apply(o.b, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	b.Reset()
	g.batch = b
	return nil
}
