package sandbox

import (
	"testing"
	"time"
)

// UseHelper makes the harness-sandbox at path the helper program of this
// process for the test t (as if it lay beside the executable), and
// returns whether it was chosen and, if not, why. After t, the helper is
// chosen again as it was.
func UseHelper(t testing.TB, path string) (chosen bool, why string) {
	old := helperAt
	rechoose := func(at string) {
		helperMu.Lock()
		if helperFile != nil {
			helperFile.Close()
		}
		helperAt, helperExe, helperFile, helperWhy = at, "", nil, ""
		helperMu.Unlock()
		chooseHelper(trialHelper)
	}
	t.Cleanup(func() { rechoose(old) })
	rechoose(path)
	_, chosen = helperProgram()
	helperMu.Lock()
	defer helperMu.Unlock()
	return chosen, helperWhy
}

// ChooseHelperAt makes the harness-sandbox at path the helper program of
// this process, for a whole test binary (TestMain), and says whether it
// was chosen and, if not, why.
func ChooseHelperAt(path string) (chosen bool, why string) {
	helperMu.Lock()
	helperAt, helperExe = path, ""
	helperMu.Unlock()
	chooseHelper(trialHelper)
	_, chosen = helperProgram()
	helperMu.Lock()
	defer helperMu.Unlock()
	return chosen, helperWhy
}

// SetSpareLife makes d the life of the spare helpers the launcher starts
// during the test t (see spareLife).
func SetSpareLife(t testing.TB, d time.Duration) {
	old := spareLife.Swap(int64(d))
	t.Cleanup(func() { spareLife.Store(old) })
}
