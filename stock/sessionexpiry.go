package stock

import (
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/mcp"
)

// expired holds the token directories whose kept sessions this process
// has expired (guarded by expiredMu): once a process, at the first stock
// that declares a remote server — a serve, a run, a worker starting.
var (
	expiredMu sync.Mutex
	expired   = map[string]bool{}
)

// expireKeptSessions forgets the sessions ts keeps for questions of
// calls whose processes died and were never resumed, past
// mcp.KeptSessionAge or mcp.KeptSessions (mcp.TokenStore.ExpireSessions),
// once a process. A failure leaves them: they are bounded again at the
// next start.
func expireKeptSessions(ts *mcp.TokenStore) {
	expiredMu.Lock()
	defer expiredMu.Unlock()
	if expired[ts.Dir] {
		return
	}
	expired[ts.Dir] = true
	_, _ = ts.ExpireSessions(time.Now(), mcp.KeptSessionAge, mcp.KeptSessions)
}
