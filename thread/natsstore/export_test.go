package natsstore

import (
	"time"

	"github.com/nats-io/nats.go"
)

// ThreadSubject is the subject of id's records in s's stream.
func ThreadSubject(s *Store, id string) string { return s.l.threadSubject(id) }

// ConnOptions returns the options of the connection s uses.
func ConnOptions(s *Store) nats.Options { return s.nc.Opts }

// SetWallClock makes the holders of s's leases read the wall clock from
// now. Call it before Lease.
func SetWallClock(s *Store, now func() time.Time) { s.wall = now }

// SetLeafSize sets how many ids a leaf of s's thread index holds.
func SetLeafSize(s *Store, n int) { s.index.leafSize = n }
