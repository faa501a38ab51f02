package stock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
	"github.com/seed-7cc7a084/harness/worktree"
)

// worktrees are the stock harness's harness.Worktrees: git worktrees of
// the place's workspace in opts.Dir (outside it), without the store;
// a thread working in one has the stock's built-in tools rooted there, in
// a sandbox whose writable root is the worktree (the store and the
// person's directories hidden as for the workspace), and an observer of
// it.
type worktrees struct {
	place Place
	opts  worktree.Options
	spec  sandbox.Spec // the workspace's sandbox: mode, network, hidden
	store string       // the store the sandbox hides ("" for a remote one)

	mu sync.Mutex
	// observers are the observers of the worktrees In rooted a thread in
	// (by root), one each, closed when Finish removes the worktree or the
	// stock closes (close). Guarded by mu.
	observers map[string]*action.Workspace
}

func newWorktrees(place Place, spec sandbox.Spec, store, dir string) *worktrees {
	w := &worktrees{place: place, spec: spec, store: store, opts: worktree.Options{Dir: dir}}
	if rel, ok := place.storeInRoot(); ok {
		w.opts.Exclude = []string{rel}
	}
	return w
}

// Create makes the worktree of the thread name, of the workspace.
func (w *worktrees) Create(ctx context.Context, name string) (facts.Worktree, error) {
	return w.create(ctx, w.place.Root, name)
}

// Branch is the branch of the worktree Create makes for the thread name.
func (w *worktrees) Branch(name string) string { return worktree.Branch(name) }

// create makes the worktree of the thread name, of the directory from:
// the workspace, or the worktree of the thread that delegates (rooted).
func (w *worktrees) create(ctx context.Context, from, name string) (facts.Worktree, error) {
	t, err := worktree.Create(ctx, from, name, w.opts)
	if err != nil {
		return facts.Worktree{}, err
	}
	return facts.Worktree{Repo: t.Repo, Workspace: t.Workspace, Path: t.Path, Root: t.Root, Branch: t.Branch, Base: t.Base, GitDir: t.GitDir}, nil
}

// Finish commits what the thread left to its branch, and removes the
// worktree unless keep.
func (w *worktrees) Finish(ctx context.Context, r facts.Worktree, name string, keep bool) (facts.WorktreeResult, error) {
	if !keep {
		w.forget(r.Root)
	}
	f, err := worktree.Finish(ctx, tree(r), name, keep)
	return facts.WorktreeResult{Branch: f.Branch, Base: f.Base, Head: f.Head, Changed: f.Changed, Kept: f.Kept}, err
}

func tree(r facts.Worktree) worktree.Tree {
	return worktree.Tree{Repo: r.Repo, Workspace: r.Workspace, Path: r.Path, Root: r.Root, Branch: r.Branch, Base: r.Base, GitDir: r.GitDir}
}

// In is s rooted in the worktree r: the built-in tools of s made again
// for r's root (every other tool, an MCP server's, kept), an observer of
// it, and declared checks run there. The record is the harness's own, but
// a root outside the directory worktrees are made in is refused all the
// same.
func (w *worktrees) In(_ context.Context, s harness.Services, r facts.Worktree) (harness.Services, error) {
	dir := w.opts.Dir
	if dir == "" {
		d, err := worktree.DefaultDir()
		if err != nil {
			return s, err
		}
		dir = d
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if !within(dir, r.Root) || !within(r.Path, r.Root) {
		return s, fmt.Errorf("worktree %s: not in %s, where worktrees are made", r.Root, dir)
	}
	if _, err := os.Stat(r.Root); err != nil {
		// Finished and removed (or removed by hand): the thread can be
		// read, and a tool it calls fails; none runs in the workspace.
		return gone(s, r)
	}
	spec, err := sandbox.Default(r.Root, w.store)
	if err != nil {
		return s, fmt.Errorf("the sandbox of %s: %w", r.Root, err)
	}
	spec.Mode, spec.Network, spec.NetworkAllow = w.spec.Mode, w.spec.Network, slices.Clone(w.spec.NetworkAllow)
	for _, h := range w.spec.Hidden {
		if !within(w.place.Root, h) {
			spec.Hidden = append(spec.Hidden, h)
		}
	}
	set, err := tools.New(r.Root, tools.WithSandbox(spec))
	if err != nil {
		return s, fmt.Errorf("the tools of worktree %s: %w", r.Root, err)
	}
	var adapters []harness.ToolAdapter
	for _, sc := range s.Tools.Schemas() {
		t, _ := s.Tools.Lookup(sc.Name)
		if own, ok := set.Lookup(sc.Name); ok {
			t = own
		} else if sc.Name == tools.MergeWorktree {
			// A child's branch comes back into this worktree, which it
			// was made of (rooted), not into the workspace.
			t = set.MergeTool()
		}
		adapters = append(adapters, t)
	}
	tb, err := harness.NewToolbox(adapters...)
	if err != nil {
		return s, err
	}
	obs, err := w.observer(r.Root, s.Blobs)
	if err != nil {
		return s, err
	}
	// The worktree is the thread's alone: no other thread's change to
	// tell apart. The worktrees of the children it delegates are made of
	// it, as it is then, not of the workspace.
	s.Tools, s.Observer, s.Workspace, s.Ledger, s.Prepare = tb, obs, r.Root, nil, spec.Prepare
	s.Worktrees = rooted{w, r}
	return s, nil
}

// rooted are the worktrees of a thread that works in a worktree of its
// own (in): those of its children are made of
// its worktree — what it has written there included — so that a child
// begins from its parent's work, and its branch is merged back into the
// parent's worktree (In's merge_worktree). Finish and In are w's.
type rooted struct {
	*worktrees
	in facts.Worktree
}

// Create makes the worktree of the thread name, of r's root. The git
// that makes it is found through the worktree's .git file, which the
// thread could have rewritten: it is put back first.
func (r rooted) Create(ctx context.Context, name string) (facts.Worktree, error) {
	if err := worktree.Relink(tree(r.in)); err != nil {
		return facts.Worktree{}, fmt.Errorf("worktree of %s: %w", r.in.Root, err)
	}
	return r.create(ctx, r.in.Root, name)
}

// gone is s for a thread whose worktree r is no longer there: its
// built-in tools fail saying so, running nothing, and nobody observes
// them. Its other tools are the workspace's, observed there (with the
// workspace's ledger): the merge its end offers (merge_worktree) writes
// the workspace, and its observation is what a person reads of it.
func gone(s harness.Services, r facts.Worktree) (harness.Services, error) {
	var adapters []harness.ToolAdapter
	for _, sc := range s.Tools.Schemas() {
		t, _ := s.Tools.Lookup(sc.Name)
		if _, builtin := builtinTools[sc.Name]; builtin {
			t = goneTool{t, r.Path}
		}
		adapters = append(adapters, t)
	}
	tb, err := harness.NewToolbox(adapters...)
	if err != nil {
		return s, err
	}
	s.Tools, s.Workspace = tb, r.Root
	return s, nil
}

// builtinTools are the tools rooted in a thread's worktree.
var builtinTools = map[string]struct{}{tools.ReadFile: {}, tools.ListFiles: {}, tools.WriteFile: {}, tools.EditFile: {}, tools.RunCommand: {}}

// goneTool is a built-in tool of a thread whose worktree is gone.
type goneTool struct {
	harness.ToolAdapter
	path string
}

// Confirm asks for nothing: the call runs nothing.
func (g goneTool) Confirm() bool { return false }

// Unobserved: the call runs nothing, so nobody looks (the thread's
// observer is the workspace's, which it does not act on).
func (g goneTool) Unobserved() bool { return true }

// Execute fails: there is no worktree to act in.
func (g goneTool) Execute(context.Context, action.Request) (facts.Report, error) {
	return facts.Report{Status: facts.StatusFailed, Error: fmt.Sprintf("%s: the thread's worktree %s is no longer there", g.Name(), g.path)}, nil
}

// observer is the one observer of the worktree rooted at root, made the
// first time it is asked for.
func (w *worktrees) observer(root string, blobs action.Blobs) (*action.Workspace, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if obs := w.observers[root]; obs != nil {
		return obs, nil
	}
	var opts []action.WorkspaceOption
	if blobs != nil {
		opts = append(opts, action.WithBlobs(blobs, 0))
	}
	obs, err := action.NewWorkspace(root, opts...)
	if err != nil {
		return nil, fmt.Errorf("the observer of worktree %s: %w", root, err)
	}
	if w.observers == nil {
		w.observers = map[string]*action.Workspace{}
	}
	w.observers[root] = obs
	return obs, nil
}

// forget closes the observer of the worktree rooted at root, if any.
func (w *worktrees) forget(root string) {
	w.mu.Lock()
	obs := w.observers[root]
	delete(w.observers, root)
	w.mu.Unlock()
	if obs != nil {
		_ = obs.Close()
	}
}

// close closes every worktree's observer.
func (w *worktrees) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for root, obs := range w.observers {
		errs = append(errs, obs.Close())
		delete(w.observers, root)
	}
	return errors.Join(errs...)
}
