package stock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// sessionTurns is the length of BenchmarkStockSession's sessions.
const sessionTurns = 50

// sessionTree writes a tree of n files (in 10×10 directories past 100),
// each 500 to 3,500 bytes from a fixed seed, and returns its root once
// they are older than the observer's racy window.
func sessionTree(b *testing.B, n int) string {
	root := harnesstest.Tree(b, n, 7)
	// Let every file age past the racy window, as in a workspace in use: a
	// file written just before an observation is read again until then.
	time.Sleep(action.DefaultRacyWindow + 100*time.Millisecond)
	return root
}

// session is the stock harness of one tree, with its store open.
type session struct {
	stock *stock.Stock
	store thread.Store
	cfg   harness.Config
}

func openSession(b *testing.B, root string) *session {
	p, err := stock.Locate(root, "")
	require.NoError(b, err)
	store, err := p.OpenStore(context.Background(), 0, true)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, store.Close()) })
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), harness.WithMaxSteps(20*sessionTurns))
	require.NoError(b, err)
	st, err := stock.NewStock(p, cfg)
	require.NoError(b, err)
	return &session{stock: st, store: store, cfg: cfg}
}

// run drives a new thread of sessionTurns model turns to done, as a new
// process would (a new observer, with the change feed on): every turn
// but the last writes a file of its own (the run's mark in it, so each
// run changes it), every write approved by policy. It returns the time it
// took.
func (s *session) run(b *testing.B, id string) time.Duration {
	ctx := context.Background()
	var lines strings.Builder
	for i := 1; i < sessionTurns; i++ {
		fmt.Fprintf(&lines, `{"text": "step %d", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"notes/n%d.txt\",\"content\":\"%s %d\\n\"}"}]}`+"\n", i, i, id, i)
	}
	lines.WriteString(`{"text": "done"}` + "\n")
	script, err := model.ParseScript("session", []byte(lines.String()))
	require.NoError(b, err)
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(b, err)

	start := time.Now()
	svc, err := s.stock.Services(script, stock.BlobsOf(s.store), action.WithChangeFeed(true))
	require.NoError(b, err)
	defer svc.Observer.(*action.Workspace).Close()
	rt, err := harness.NewRuntime(s.store, svc, s.cfg)
	require.NoError(b, err)
	th := rt.Thread(s.stock.Actor, id)
	_, err = th.Start(ctx, "Write the notes.")
	require.NoError(b, err)
	st, err := drive.Drive(ctx, th, drive.Options{Approval: all})
	require.NoError(b, err)
	require.Equal(b, harness.StatusDone, st.Status, st.Reason)
	return time.Since(start)
}

// BenchmarkStockSession is the per-turn cost of a 50-turn session — a
// model turn, a write approved by policy, the write observed by the
// stock harness with the change feed on — on a 10,000-file tree, against
// the same session on a 10-file tree, in the same run: ratio is the big
// tree's per-turn cost over the small one's (aim: within 1.5), and
// ratio-min/-med/-max the spread of that ratio over the pairs of
// sessions run back to back. Each session is a new process's: a new
// observer, which starts from the stat cache the store keeps; each tree
// has had one session before (untimed), as a workspace in use has.
// cold-ms/turn@10k is that first session's on a fresh store, whose
// observer reads and keeps every file, and cold-ratio its cost over the
// first session's on the 10-file tree.
//
//	go test ./stock -run '^$' -bench StockSession -benchtime 5x
func BenchmarkStockSession(b *testing.B) {
	small := openSession(b, sessionTree(b, 10))
	big := openSession(b, sessionTree(b, 10_000))
	coldSmall := small.run(b, "warm")
	cold := big.run(b, "warm")
	var smallT, bigT time.Duration
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("s%d", i)
		var s, g time.Duration
		if i%2 == 0 {
			s = small.run(b, id)
			g = big.run(b, id)
		} else {
			g = big.run(b, id)
			s = small.run(b, id)
		}
		smallT += s
		bigT += g
		ratios = append(ratios, float64(g)/float64(s))
	}
	per := func(d time.Duration) float64 {
		return float64(d) / float64(b.N) / sessionTurns / float64(time.Millisecond)
	}
	slices.Sort(ratios)
	b.ReportMetric(per(smallT), "ms/turn@10")
	b.ReportMetric(per(bigT), "ms/turn@10k")
	b.ReportMetric(float64(cold)/sessionTurns/float64(time.Millisecond), "cold-ms/turn@10k")
	b.ReportMetric(float64(cold)/float64(coldSmall), "cold-ratio")
	b.ReportMetric(float64(bigT)/float64(smallT), "ratio")
	b.ReportMetric(ratios[0], "ratio-min")
	b.ReportMetric(ratios[len(ratios)/2], "ratio-med")
	b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
}
