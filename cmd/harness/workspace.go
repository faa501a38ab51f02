package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// A thread works in the workspace it records (system.configured's
// Workspace, host:root): a command that acts on the thread — resumes it,
// answers it, undoes it, shows its diffs — acts there, wherever it was
// run from (another directory with --store, say). A thread that works on
// another machine, or in a directory this machine does not have, is
// refused, naming both.

// recordedWorkspace is the workspace the thread recorded, "" when it
// records none (it was never configured, or before workspaces were
// recorded).
func recordedWorkspace(ctx context.Context, store thread.Store, id string) (string, error) {
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return "", fmt.Errorf("read %s: %w", id, err)
		}
		if f.Kind != facts.KindSystemConfigured {
			continue
		}
		sys, err := facts.Decode[facts.SystemConfigured](f)
		if err != nil {
			return "", fmt.Errorf("thread %s at seq %d: %w", id, f.Seq, err)
		}
		return sys.Workspace, nil
	}
	return "", nil
}

// splitWorkspace splits a recorded workspace into its host ("" when none
// was recorded) and its root.
func splitWorkspace(w string) (host, root string) {
	if filepath.IsAbs(w) {
		return "", w
	}
	if h, r, ok := strings.Cut(w, ":"); ok && filepath.IsAbs(r) {
		return h, r
	}
	return "", w
}

// enter makes the session act in the workspace the thread id records.
// It is a no-op when that is the session's already, or the thread records
// none. Elsewhere on this machine, the session's harness is made again
// there (its tools, observer and diffs), and stderr says so once.
func (a *app) enter(ctx context.Context, s *session, id string) error {
	w, err := recordedWorkspace(ctx, s.store, id)
	if err != nil || w == "" {
		return err
	}
	here := stock.WorkspaceName(s.place.Root)
	if w == here {
		return nil
	}
	host, root := splitWorkspace(w)
	thisHost, _ := os.Hostname()
	switch {
	case host != "" && thisHost != "" && host != thisHost:
		return fmt.Errorf("thread %s works in %s, on another machine (this is %s); run the command there", id, w, here)
	case !isDir(root):
		return fmt.Errorf("thread %s works in %s, which is not a directory here (this command is in %s)", id, w, here)
	}
	if root == s.place.Root {
		return nil // the same directory, recorded without a host
	}
	if s.place.StoreInside() {
		// It never acts in another directory (see stock.Place.StoreInside).
		return fmt.Errorf("thread %s works in %s, but its store is %s, inside this workspace (%s): a store that came with a workspace never acts in another; run the command in %s with that workspace's own store, or name a store with --store",
			id, present.EscapeLine(w), present.EscapeLine(s.place.Store), present.EscapeLine(here), present.EscapeLine(root))
	}
	p := s.place
	p.Root, p.Within = root, ""
	st, err := stock.NewStock(p, s.cfg, s.so...)
	if err != nil {
		return fmt.Errorf("thread %s works in %s: %w", id, w, err)
	}
	fmt.Fprintf(a.stderr, "harness: thread %s works in %s; acting there (not in %s)\n", id, present.EscapeLine(w), present.EscapeLine(here))
	// MCP servers the stock of the other workspace started are ended
	// (their root was the wrong one); the new stock's end with the command.
	s.stock.Close()
	a.mcpStarted(st)
	s.place, s.stock = p, st
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
