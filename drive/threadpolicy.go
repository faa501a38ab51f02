package drive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// A thread's approval policy is a fact of the thread: policy.set, posted
// from outside when the thread starts and again whenever a person changes
// it. The latest one decides; a thread that records none is driven by
// whatever Approval its caller gives (Options.Approval).

// Policy is the approval as a policy.set payload, by who sets it.
func (a Approval) Policy(by string) facts.PolicySet {
	p := facts.PolicySet{Approve: string(a.Mode), By: by}
	if a.Mode == ApproveAsk {
		p.Approve = ""
	}
	for _, x := range a.Allow {
		p.Allow = append(p.Allow, x.String())
	}
	for _, x := range a.Deny {
		p.Deny = append(p.Deny, x.String())
	}
	return p
}

// ApprovalOf is the Approval a policy.set payload records.
func ApprovalOf(p facts.PolicySet) (Approval, error) {
	return NewApproval(p.Approve, p.Allow, p.Deny)
}

// SamePolicy reports whether two policies decide alike: the same mode
// (none is ask) and the same patterns in the same order. Who set them
// does not count.
func SamePolicy(a, b facts.PolicySet) bool {
	mode := func(s string) string {
		if s == "" {
			return string(ApproveAsk)
		}
		return s
	}
	return mode(a.Approve) == mode(b.Approve) && slices.Equal(a.Allow, b.Allow) && slices.Equal(a.Deny, b.Deny)
}

// ThreadPolicy is the thread's latest policy.set and its seq; ok is false
// when the thread records none (or has no facts). It is read from the
// thread's view (harness.View.Own), never from a scan of the log.
func ThreadPolicy(ctx context.Context, th *harness.Thread) (p facts.PolicySet, seq uint64, ok bool, err error) {
	v, err := th.View(ctx)
	if errors.Is(err, harness.ErrUnknownThread) {
		return facts.PolicySet{}, 0, false, nil
	}
	if err != nil {
		return facts.PolicySet{}, 0, false, fmt.Errorf("read the policy of %s: %w", th.ID(), err)
	}
	return v.Own.Policy()
}

// SetPolicy records p as the thread's policy from now on, unless the
// thread's latest policy already decides alike (then nothing is posted,
// and Posted.Duplicate says so, with that policy's seq). The key of the
// post derives from the policy it replaces and p, so a command run again
// appends it once. A policy that does not parse is an error and nothing is
// posted.
func SetPolicy(ctx context.Context, th *harness.Thread, p facts.PolicySet) (harness.Posted, error) {
	if _, err := ApprovalOf(p); err != nil {
		return harness.Posted{}, fmt.Errorf("policy of %s: %w", th.ID(), err)
	}
	cur, seq, ok, err := ThreadPolicy(ctx, th)
	if err != nil {
		return harness.Posted{}, err
	}
	if ok && SamePolicy(cur, p) {
		return harness.Posted{Seq: seq, Duplicate: true}, nil
	}
	in, err := policyIngress(p, seq)
	if err != nil {
		return harness.Posted{}, fmt.Errorf("policy of %s: %w", th.ID(), err)
	}
	return th.Post(ctx, in.Draft, in.Key)
}

// StartingPolicy is the policy.set a thread starts with, to be posted with
// its first message (harness.Thread.Submit's also), so that no runtime
// ever reads the thread without it. p is checked as SetPolicy checks it.
func StartingPolicy(p facts.PolicySet) (harness.Ingress, error) {
	if _, err := ApprovalOf(p); err != nil {
		return harness.Ingress{}, fmt.Errorf("policy: %w", err)
	}
	return policyIngress(p, 0)
}

// policyIngress is the policy.set of p under its key: the seq of the
// policy it follows (0 for none) and a digest of p.
func policyIngress(p facts.PolicySet, after uint64) (harness.Ingress, error) {
	d, err := facts.NewDraft(facts.KindPolicySet, "", p)
	if err != nil {
		return harness.Ingress{}, err
	}
	sum := sha256.Sum256(d.Data)
	return harness.Ingress{Draft: d, Key: "policy-" + strconv.FormatUint(after, 10) + "-" + hex.EncodeToString(sum[:6])}, nil
}

// Always is the allow pattern that approves, from now on, calls like this
// one of tool with args — what a person means by "always, for this
// thread": a command exactly as it is written ("run_command:go test
// ./..."), a path's directory and all below it ("write_file:docs/*", or
// the path itself at the workspace's top), a list_files pattern as it is,
// or the tool alone when the call names no subject. root is the workspace
// absolute paths are made relative to. A path that leaves the workspace
// gives the path as written: it matches nothing (see Pattern), so such a
// call is still put to a person.
func Always(root, tool, args string) Pattern {
	s := subjectOf(root, args)
	switch {
	case !s.present:
		return Pattern{Tool: tool}
	case s.command:
		return Pattern{Tool: tool, Glob: s.raw}
	case !s.clean:
		return Pattern{Tool: tool, Glob: s.raw}
	case !s.isPath:
		return Pattern{Tool: tool, Glob: s.path}
	}
	if dir := path.Dir(s.path); dir != "." {
		return Pattern{Tool: tool, Glob: dir + "/*"}
	}
	return Pattern{Tool: tool, Glob: s.path}
}
