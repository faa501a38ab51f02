package thread

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFreeReadingsAreTakenAfterTheCall has 64 goroutines ask for the free
// space over and over while each reading takes a while: every answer must
// come from a reading that began after its call did (a reading shared,
// never one served from before), and the readings must be shared.
func TestFreeReadingsAreTakenAfterTheCall(t *testing.T) {
	var begun atomic.Uint64 // readings begun; a reading returns its number
	statFree = func(*os.File) (uint64, bool) {
		n := begun.Add(1)
		time.Sleep(200 * time.Microsecond)
		return n, true
	}
	t.Cleanup(func() { statFree = freeBytes })
	var f freeReadings
	var calls atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 50 {
				before := begun.Load()
				got, ok := f.read()
				calls.Add(1)
				if !ok || got <= before {
					t.Errorf("reading %d answered a call made after reading %d had begun", got, before)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := begun.Load(); n*4 > uint64(calls.Load()) {
		t.Errorf("%d readings for %d calls: not shared", n, calls.Load())
	}
	if f.running != nil || f.queued != nil {
		t.Error("a reading is left under way")
	}
}
