package thread

import "github.com/cockroachdb/pebble/v2"

// Test-only access to the raw database and the key schema, for tests that
// damage stored data the way a disk or a person could.

func RawDB(s *PebbleStore) *pebble.DB { return s.db }

func FactKey(id string, seq uint64) []byte { return factKey(id, seq) }

func HeadKey(id string) []byte { return headKey(id) }

func CauseKey(id, cause string) []byte { return causeKey(id, cause) }

func EncodeHead(h Head) []byte { return encodeHead(h) }

func EncodeSeq(seq uint64) []byte { return encodeSeq(seq) }

func SnapshotKey(id string, seq uint64) []byte { return snapshotKey(id, seq) }
