package thread_test

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

func BenchmarkTmpEnv(b *testing.B) {
	fx := loadReadFixture(b)
	b.ResetTimer()
	for range b.N {
		n := 0
		for _, err := range fx.store.Read(context.Background(), "long", 1) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
}

func BenchmarkTmpScan(b *testing.B) {
	fx := loadReadFixture(b)
	b.ResetTimer()
	for range b.N {
		it, _ := fx.raw.NewIter(&pebble.IterOptions{LowerBound: thread.FactKey("long", 0), UpperBound: thread.FactKey("long", readFixtureFacts+1)})
		for ok := it.First(); ok; ok = it.Next() {
			v, _ := it.ValueAndErr()
			if len(v) == 0 {
				b.Fatal()
			}
		}
		it.Close()
	}
}

func BenchmarkTmpScanStore(b *testing.B) {
	fx := loadReadFixture(b)
	b.ResetTimer()
	for range b.N {
		err := fx.store.Scan(context.Background(), "long", 1, func(facts.Fact) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTmpScanStoreRaw(b *testing.B) {
	fx := loadReadFixture(b)
	db := thread.RawDB(fx.store)
	b.ResetTimer()
	for range b.N {
		it, _ := db.NewIter(&pebble.IterOptions{LowerBound: thread.FactKey("long", 0), UpperBound: thread.FactKey("long", readFixtureFacts+1)})
		for ok := it.First(); ok; ok = it.Next() {
			v, _ := it.ValueAndErr()
			if len(v) == 0 {
				b.Fatal()
			}
		}
		it.Close()
	}
}
