package search

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// fxThreads is how many threads the tests' fixture has: 2,000, as the
// issue asks (20,000 facts; about 10 s on 2 busy cores).
const fxThreads = 2000

// ref names a fact.
type ref struct {
	Thread string
	Seq    uint64
}

func openIndex(t *testing.T, dir string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), dir, 0)
	require.NoError(t, err)
	t.Cleanup(func() { ix.Close() })
	return ix
}

// find runs query over every page of limit hits and returns the hits.
func find(t *testing.T, ix *Index, store thread.Store, query string, limit int) []ref {
	t.Helper()
	ctx := context.Background()
	q, err := Parse(query, fxBase.Add(24*time.Hour))
	require.NoError(t, err, query)
	_, err = ix.Update(ctx, store)
	require.NoError(t, err)
	out := []ref{}
	cursor := ""
	for {
		p, err := ix.Search(ctx, store, q, Options{Limit: limit, Cursor: cursor})
		require.NoError(t, err, query)
		require.Zero(t, p.Dropped, query)
		for _, h := range p.Hits {
			out = append(out, ref{h.Fact.Thread, h.Fact.Seq})
			require.Equal(t, h.Hash, h.Fact.Hash())
		}
		if p.Next == "" {
			return out
		}
		require.Len(t, p.Hits, limit, "a page before the last is full")
		cursor = p.Next
	}
}

// expect lists, newest first, the facts of the fixture's n threads whose
// seqs want gives.
func expect(n int, want func(i int, x fxThread) []uint64) []ref {
	out := []ref{}
	for i := n - 1; i >= 0; i-- {
		seqs := slices.Clone(want(i, fxOf(i)))
		slices.Sort(seqs)
		slices.Reverse(seqs)
		for _, s := range seqs {
			out = append(out, ref{fxOf(i).id, s})
		}
	}
	return out
}

func when(ok bool, seqs ...uint64) []uint64 {
	if ok {
		return seqs
	}
	return nil
}

// The facts of a call from the fixture's answer on, which carry who answered.
var answered = []uint64{seqAnswer, seqStarted, seqCompleted, seqCheck}

// The facts of the fixture's call: the turn that made it and every fact after.
var callFacts = []uint64{seqTurn, seqRequested, seqConfirm, seqAnswer, seqStarted, seqCompleted, seqCheck}

var allSeqs = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}

// The facts after system.configured, which carry the model.
var configured = allSeqs[seqConfigured-1:]

var queries = []struct {
	query string
	want  func(i int, x fxThread) []uint64
}{
	// Each field alone.
	{"kind:action.completed", func(int, fxThread) []uint64 { return []uint64{seqCompleted} }},
	{"kind:action", func(int, fxThread) []uint64 { return []uint64{seqRequested, seqStarted, seqCompleted} }},
	{"tool:run_command", func(_ int, x fxThread) []uint64 { return when(x.tool == "run_command", callFacts...) }},
	{"path:src/main.go", func(_ int, x fxThread) []uint64 { return when(x.path == "src/main.go", callFacts...) }},
	{"path:./docs/", func(_ int, x fxThread) []uint64 { return when(x.path == "docs/guide/intro.md", callFacts...) }},
	{"path:intro.md", func(_ int, x fxThread) []uint64 { return when(x.path == "docs/guide/intro.md", callFacts...) }},
	{"by:ana", func(_ int, x fxThread) []uint64 { return when(x.by == "ana", answered...) }},
	{"effect:unknown", func(_ int, x fxThread) []uint64 { return when(x.effect == facts.EffectUnknown, seqCompleted, seqCheck) }},
	{"check:fail", func(_ int, x fxThread) []uint64 { return when(x.check == facts.VerdictFail, seqCheck) }},
	{"check:file_equals", func(int, fxThread) []uint64 { return []uint64{seqCheck} }},
	{"model:claude-test", func(_ int, x fxThread) []uint64 { return when(x.model == "anthropic:claude-test", configured...) }},
	{"model:openai:gpt-test", func(_ int, x fxThread) []uint64 { return when(x.model == "openai:gpt-test", configured...) }},
	{"thread:t-00007", func(i int, _ fxThread) []uint64 { return when(i == 7, allSeqs...) }},
	{"zebra7", func(i int, _ fxThread) []uint64 { return when(i == 7, seqCompleted) }},
	{"LOGIN Bug", func(_ int, x fxThread) []uint64 { return when(x.topic == "login", seqMessage) }},
	{"since:2026-03-01T09:10:00Z until:2026-03-01T09:20:00Z", func(i int, _ fxThread) []uint64 { return when(i >= 10 && i < 20, allSeqs...) }},
	{"until:2026-03-01T09:03:00Z", func(i int, _ fxThread) []uint64 { return when(i < 3, allSeqs...) }},
	// Fields together.
	{"by:ana tool:write_file path:go.mod", func(_ int, x fxThread) []uint64 {
		return when(x.by == "ana" && x.tool == "write_file" && x.path == "go.mod", answered...)
	}},
	{"kind:action.completed effect:unknown model:gpt-test", func(_ int, x fxThread) []uint64 {
		return when(x.effect == facts.EffectUnknown && x.model == "openai:gpt-test", seqCompleted)
	}},
	{"check:fail by:bob", func(_ int, x fxThread) []uint64 { return when(x.check == facts.VerdictFail && x.by == "bob", seqCheck) }},
	{"parser kind:model.turn", func(_ int, x fxThread) []uint64 { return when(x.topic == "parser", seqTurn, seqDone) }},
	// A word of a tool call's arguments.
	{"cache kind:model.turn", func(_ int, x fxThread) []uint64 {
		return append(when(x.topic == "cache", seqTurn, seqDone), when(x.path == "cache.toml" && x.topic != "cache", seqTurn)...)
	}},
	{`path:"go.mod" since:2026-03-01T10:00:00Z tool:edit_file`, func(i int, x fxThread) []uint64 {
		return when(i >= 60 && x.path == "go.mod" && x.tool == "edit_file", callFacts...)
	}},
	{"by:nobody", func(int, fxThread) []uint64 { return nil }},
	{"kind:action.completed thread:t-00003 zebra4", func(int, fxThread) []uint64 { return nil }},
}

func TestSearchFindsEachFieldAloneAndTogether(t *testing.T) {
	store := fixture(t, fxThreads)
	ix := openIndex(t, t.TempDir())
	for _, c := range queries {
		t.Run(c.query, func(t *testing.T) {
			want := expect(fxThreads, c.want)
			require.Equal(t, want, find(t, ix, store, c.query, 7))
		})
	}
}

func TestAnIndexDeletedAndRebuiltGivesTheSameAnswers(t *testing.T) {
	ctx := context.Background()
	store := fixture(t, 60)
	dir := t.TempDir()
	ix, err := Open(ctx, dir, 0)
	require.NoError(t, err)
	before := map[string][]ref{}
	for _, c := range queries {
		before[c.query] = find(t, ix, store, c.query, 50)
	}
	require.NoError(t, ix.Close())
	require.NoError(t, os.RemoveAll(dir))
	ix = openIndex(t, dir)
	for _, c := range queries {
		require.Equal(t, before[c.query], find(t, ix, store, c.query, 50), c.query)
	}
	st, err := ix.Reindex(ctx, store)
	require.NoError(t, err)
	require.Equal(t, Stats{Threads: 60, Facts: 60 * fxFacts}, st)
	for _, c := range queries {
		require.Equal(t, before[c.query], find(t, ix, store, c.query, 50), c.query)
	}
}

func TestUpdateIndexesOnlyWhatWasAppended(t *testing.T) {
	ctx := context.Background()
	store := fixture(t, 20)
	ix := openIndex(t, t.TempDir())
	st, err := ix.Update(ctx, store)
	require.NoError(t, err)
	require.Equal(t, Stats{Threads: 20, Facts: 20 * fxFacts}, st)
	st, err = ix.Update(ctx, store)
	require.NoError(t, err)
	require.Equal(t, Stats{}, st, "an index up to date reads no log")

	// bob reconciles thread 3's call, after it was indexed: the new fact
	// is indexed alone, and carries what the call said before it.
	d, err := facts.NewDraft(facts.KindEffectReconciled, facts.IngressCause("r"), facts.EffectReconciled{ActionID: "1-call_1", Decision: facts.DecisionAccept, By: "zed", Note: "looked fine to me"})
	require.NoError(t, err)
	_, err = store.Append(ctx, fxOf(3).id, fxFacts, d)
	require.NoError(t, err)
	st, err = ix.UpdateThread(ctx, store, fxOf(4).id)
	require.NoError(t, err)
	require.Equal(t, Stats{}, st, "another thread")
	st, err = ix.UpdateThread(ctx, store, fxOf(3).id)
	require.NoError(t, err)
	require.Equal(t, Stats{Threads: 1, Facts: 1}, st)
	st, err = ix.Update(ctx, store)
	require.NoError(t, err)
	require.Equal(t, Stats{}, st, "UpdateThread indexed it")
	st, err = ix.UpdateThread(ctx, store, "no-such-thread")
	require.NoError(t, err)
	require.Equal(t, Stats{}, st)
	require.Equal(t, []ref{{fxOf(3).id, fxFacts + 1}}, find(t, ix, store, "by:zed tool:"+fxOf(3).tool+" path:"+fxOf(3).path+" fine", 10))
}

func TestSearchPagesNewestFirst(t *testing.T) {
	store := fixture(t, 30)
	ix := openIndex(t, t.TempDir())
	all := find(t, ix, store, "kind:model.turn", 1000)
	require.Len(t, all, 60)
	for _, limit := range []int{1, 7, 59, 60} {
		require.Equal(t, all, find(t, ix, store, "kind:model.turn", limit), "limit %d", limit)
	}
	require.Equal(t, ref{fxOf(29).id, seqDone}, all[0], "newest first")
	_, err := ix.Search(context.Background(), store, Query{Terms: []string{termAll}}, Options{Cursor: "zz"})
	require.ErrorIs(t, err, ErrCursor)
	_, err = ix.Search(context.Background(), store, Query{Terms: []string{termAll}}, Options{Limit: MaxLimit + 1})
	require.Error(t, err)
}

// A posting written into the index alone — naming a fact the log holds
// under terms the fact does not have, with a hash the fact does not have,
// or a thread the log does not hold — is never a hit.
func TestAFactForgedIntoTheIndexNeverShows(t *testing.T) {
	ctx := context.Background()
	store := fixture(t, 10)
	ix := openIndex(t, t.TempDir())
	_, err := ix.Update(ctx, store)
	require.NoError(t, err)
	real := readFact(t, store, fxOf(4).id, seqAnswer)
	other := readFact(t, store, fxOf(5).id, seqAnswer)
	forge := func(term string, f facts.Fact, hash facts.Hash, src ...uint64) {
		require.NoError(t, ix.db.Set(postingKey(nil, term, f), postingValue(nil, hash, src), pebble.Sync))
	}
	// The fact is the log's, its hash too, but mallory never answered it.
	forge(termBy+"mallory", real, real.Hash())
	// A source that would give it mallory: sources are read from the log.
	forge(termBy+"mallory", other, other.Hash(), seqAnswer-1)
	// A fact the log does not have at that seq.
	ghost := real
	ghost.Seq = 99
	forge(termBy+"mallory", ghost, real.Hash())
	// A thread the log does not have.
	ghost = real
	ghost.Thread = "nobody"
	forge(termBy+"mallory", ghost, real.Hash())
	// ana's answer, under a hash that is not the log's.
	forge(termBy+"mallory", readFact(t, store, fxOf(0).id, seqAnswer), facts.Hash{1})
	// A fact of the log moved in time, to sort first.
	moved := readFact(t, store, fxOf(1).id, seqAnswer)
	moved.At = moved.At.Add(time.Hour)
	forge(termBy+"mallory", moved, moved.Hash())
	// Values that do not decode.
	require.NoError(t, ix.db.Set(postingKey(nil, termBy+"mallory", readFact(t, store, fxOf(2).id, seqAnswer)), []byte("junk"), pebble.Sync))

	q, err := Parse("by:mallory", fxBase)
	require.NoError(t, err)
	p, err := ix.Search(ctx, store, q, Options{})
	require.NoError(t, err)
	require.Empty(t, p.Hits)
	require.Equal(t, 7, p.Dropped)

	// A forged posting among real ones: the real ones show, it does not.
	forge(termBy+fxOf(4).by, readFact(t, store, fxOf(6).id, seqDone), readFact(t, store, fxOf(6).id, seqDone).Hash())
	want := expect(10, func(_ int, x fxThread) []uint64 { return when(x.by == fxOf(4).by, answered...) })
	require.Equal(t, want, findDropping(t, ix, store, "by:"+fxOf(4).by, 1))

	// A rebuilt index holds nothing forged.
	_, err = ix.Reindex(ctx, store)
	require.NoError(t, err)
	require.Equal(t, want, findDropping(t, ix, store, "by:"+fxOf(4).by, 0))
	require.Empty(t, findDropping(t, ix, store, "by:mallory", 0))
}

// findDropping is find that allows dropped hits.
func findDropping(t *testing.T, ix *Index, store thread.Store, query string, dropped int) []ref {
	t.Helper()
	q, err := Parse(query, fxBase)
	require.NoError(t, err)
	p, err := ix.Search(context.Background(), store, q, Options{Limit: MaxLimit})
	require.NoError(t, err)
	require.Equal(t, dropped, p.Dropped)
	out := []ref{}
	for _, h := range p.Hits {
		out = append(out, ref{h.Fact.Thread, h.Fact.Seq})
	}
	return out
}

func readFact(t *testing.T, store thread.Store, id string, seq uint64) facts.Fact {
	t.Helper()
	f, ok, err := readOne(context.Background(), store, id, seq)
	require.NoError(t, err)
	require.True(t, ok)
	return f
}

// An index of one log, asked about another that holds a thread of the
// same id (a store replaced, a log rewritten): the thread is indexed again
// from its start, and the old log's hits are not shown.
func TestARewrittenLogIsIndexedAgain(t *testing.T) {
	ctx := context.Background()
	first := fixture(t, 3)
	ix := openIndex(t, t.TempDir())
	require.Equal(t, []ref{{fxOf(1).id, seqCompleted}}, find(t, ix, first, "zebra1", 10))

	second, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer second.Close()
	x := fxOf(1)
	x.word = "okapi"
	_, err = second.Append(ctx, x.id, 0, x.drafts(t)...)
	require.NoError(t, err)
	// Longer than the log indexed, too: its fact after the mark does not
	// link to the fact the mark names.
	more, err := facts.NewDraft(facts.KindUserMessage, "ingress/more", facts.UserMessage{Text: "more"})
	require.NoError(t, err)
	_, err = second.Append(ctx, x.id, fxFacts, more)
	require.NoError(t, err)
	st, err := ix.Update(ctx, second)
	require.NoError(t, err)
	require.Equal(t, Stats{Threads: 1, Facts: fxFacts + 1, Rewritten: 1}, st)
	require.Empty(t, findDropping(t, ix, second, "zebra1", 1))
	require.Equal(t, []ref{{x.id, seqCompleted}}, findDropping(t, ix, second, "okapi", 0))
}

// A real run's log: the runtime's own facts, answered by ana.
func TestParseRefusesNamingTheTerm(t *testing.T) {
	for _, c := range []struct{ query, says string }{
		{"", "empty"},
		{"   ", "empty"},
		{"colour:red", `term 1 "colour:red": no field "colour"`},
		{"kind:action.completed by:", `term 2 "by:": by: has no value`},
		{"effect:maybe", `term 1 "effect:maybe": want reported, observed, unknown or none`},
		{"since:yesterday", `term 1 "since:yesterday": want a date`},
		{"thread:../x", `term 1 "thread:../x"`},
		{`path:"unclosed`, "a quote that is not closed"},
		{"kind:Not*AKind", "not a kind"},
		{"!!! ---", `term 1 "!!!": no word to look for`},
		{"since:2026-03-02 until:2026-03-01", "is not before until"},
		{"status:parked status:done", "a second status"},
		{"since:0001-01-01", "before 1970"},
		{"until:9999-01-01", "after 2261"},
		{"since:100000d", "before 1970"},
	} {
		_, err := Parse(c.query, fxBase)
		require.ErrorIs(t, err, ErrQuery, c.query)
		require.ErrorContains(t, err, c.says, c.query)
	}
	_, err := Parse("status:sleeping", fxBase, "parked", "done")
	require.ErrorContains(t, err, "want parked, done")
	q, err := Parse(`"http://xy.yz/a" since:7d until:90m status:parked`, fxBase, "parked")
	require.NoError(t, err)
	require.Equal(t, []string{"w:http", "w:xy", "w:yz"}, q.Terms)
	require.Equal(t, fxBase.Add(-7*24*time.Hour), q.Since)
	require.Equal(t, fxBase.Add(-90*time.Minute), q.Until)
	require.Equal(t, "parked", q.Status)
	_, err = Parse(fmt.Sprint(slices.Repeat([]string{"a1"}, MaxQueryTerms+1)), fxBase)
	require.ErrorIs(t, err, ErrQuery)
}

// An index a repository brought along — a link where the index would be,
// a link inside it, another layout — is not written through: Open
// refuses the first two; Rebuild refuses the first and makes the others
// anew.
func TestAnIndexPlantedIsNotWrittenThrough(t *testing.T) {
	ctx := context.Background()
	store := fixture(t, 2)
	elsewhere := t.TempDir()
	root := t.TempDir()

	link := root + "/link"
	require.NoError(t, os.Symlink(elsewhere, link))
	_, err := Open(ctx, link, 0)
	require.ErrorIs(t, err, ErrNotDir)
	_, _, err = Rebuild(ctx, link, 0, store)
	require.ErrorIs(t, err, ErrNotDir)

	holding := root + "/holding"
	require.NoError(t, os.Mkdir(holding, 0o755))
	require.NoError(t, os.Symlink(elsewhere+"/victim", holding+"/000002.log"))
	_, err = Open(ctx, holding, 0)
	require.ErrorIs(t, err, ErrNotDir)
	ix, st, err := Rebuild(ctx, holding, 0, store)
	require.NoError(t, err)
	require.Equal(t, 2*fxFacts, st.Facts)
	require.NoError(t, ix.Close())

	// A directory whose parent is not there yet (a NATS store's
	// workspace with no .harness) is made.
	ix, err = Open(ctx, root+"/no/such/search", 0)
	require.NoError(t, err)
	require.NoError(t, ix.Close())

	old := root + "/old"
	ix, err = Open(ctx, old, 0)
	require.NoError(t, err)
	require.NoError(t, ix.db.Set([]byte{tableVersion}, []byte{99}, pebble.Sync))
	require.NoError(t, ix.Close())
	_, err = Open(ctx, old, 0)
	require.ErrorIs(t, err, ErrIndexVersion)
	ix, _, err = Rebuild(ctx, old, 0, store)
	require.NoError(t, err)
	require.NoError(t, ix.Close())

	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was written through a link")
}

// A model that names its calls call_1 in every turn: each turn's call
// keeps its own tool and paths.
func TestCallsOfTheSameIDInTwoTurnsAreTwoCalls(t *testing.T) {
	ctx := context.Background()
	store := fixture(t, 0)
	x := fxOf(0)
	first := x.drafts(t)
	x.tool, x.path = "edit_file", "later.txt"
	second := x.drafts(t)[2:] // the turn and its call, under the same ids
	for i := range second {
		second[i].Cause += "/again"
	}
	_, err := store.Append(ctx, x.id, 0, append(first, second...)...)
	require.NoError(t, err)
	ix := openIndex(t, t.TempDir())
	seqs := func(query string) []uint64 {
		var out []uint64
		for _, r := range find(t, ix, store, query, 50) {
			out = append(out, r.Seq)
		}
		return out
	}
	again := func(s uint64) uint64 { return s + fxFacts - 2 }
	require.Equal(t, []uint64{seqCheck, seqCompleted, seqStarted, seqAnswer, seqConfirm, seqRequested, seqTurn}, seqs("path:"+fxOf(0).path))
	require.Equal(t, []uint64{again(seqCheck), again(seqCompleted), again(seqStarted), again(seqAnswer), again(seqConfirm), again(seqRequested), again(seqTurn)}, seqs("path:later.txt"))
	require.Equal(t, []uint64{again(seqCompleted)}, seqs("tool:edit_file kind:action.completed"))
}
