package action

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// Boundary runs actions through the effect boundary. It holds what the
// runtime, not the adapter, controls: the observer, the capabilities the
// thread was granted, where checks look, and where contents are kept.
type Boundary struct {
	// Observer reads the world before and after each adapter runs; nil
	// means nobody looks, and every effect is "reported".
	Observer Observer
	// Granted are the capabilities the thread was granted; an action that
	// needs another is denied without invoking its adapter.
	Granted []Capability
	// Root is the workspace directory checks resolve paths in.
	Root string
	// Blobs, when set, keeps the listing of each observation, so a resume
	// after a crash can say which paths changed, and so can the next action
	// when the workspace changed between two.
	Blobs Blobs
	// Since is the thread's last observation of the workspace, as its log
	// records it (see ObservedIn); zero when it records none. When the
	// reading before an action differs from it, the workspace changed while
	// no action of the thread ran: Begin, Deny and the refusals return that
	// change as a workspace.changed record, to be appended before the
	// action's own, so that the action's observation starts from the new
	// state and the change is not blamed on it.
	Since Observed
	// Commands runs the commands of declared checks (command_succeeds), in
	// the sandbox each request recorded; nil decides no such check.
	Commands CheckCommands
	// Ledger, when set, is shared by the threads that work in Root: an
	// action's observation then names the changes other threads'
	// actions made (see Ledger), Thread being this thread's id.
	Ledger *Ledger
	Thread string
	// Prepare, when set, is called by Begin before the reading an
	// action of capability Execute (a command) begins with: it makes what the runtime makes in the
	// workspace for an action (what a command's sandbox covers, see
	// sandbox.Spec.Prepare), so that the reading before already holds
	// it and the action's observation does not put it on the action.
	Prepare func()
}

// Observed is a reading of the workspace that a thread's log records: the
// seq of the fact, the hash, and the digest of its kept listing ("" when
// none was kept).
type Observed struct {
	Seq      uint64
	Hash     string
	Manifest string
}

// ObservedIn returns the reading of the workspace that f records, if it
// records one: action.started (the reading before), action.completed (the
// reading after, when there was one), action.interrupted (the reading
// when it was found in doubt) and workspace.changed (the new state). The
// last such fact of a log is the thread's last observation. A fold that
// has decoded the payload already asks Observation instead.
func ObservedIn(f facts.Fact) (Observed, bool, error) {
	var p any
	var err error
	switch f.Kind {
	case facts.KindActionStarted:
		p, err = facts.Decode[facts.ActionStarted](f)
	case facts.KindActionCompleted:
		p, err = facts.Decode[facts.ActionCompleted](f)
	case facts.KindActionInterrupted:
		p, err = facts.Decode[facts.ActionInterrupted](f)
	case facts.KindWorkspaceChanged:
		p, err = facts.Decode[facts.WorkspaceChanged](f)
	default:
		return Observed{}, false, nil
	}
	if err != nil {
		return Observed{}, false, err
	}
	o, ok := Observation(f.Seq, p)
	return o, ok, nil
}

// Observation is ObservedIn of a payload already decoded, at seq: false
// for a payload that records no reading of the workspace.
func Observation(seq uint64, payload any) (Observed, bool) {
	o := Observed{Seq: seq}
	switch p := payload.(type) {
	case facts.ActionStarted:
		o.Hash, o.Manifest = p.ObservedBefore, p.Manifest
	case facts.ActionCompleted:
		if p.Observation.Available {
			o.Hash, o.Manifest = p.Observation.After, p.Observation.Manifest
		}
	case facts.ActionInterrupted:
		o.Hash, o.Manifest = p.ObservedNow, p.Manifest
	case facts.WorkspaceChanged:
		o.Hash = p.After
	}
	return o, o.Hash != ""
}

// Begun is an action allowed to start: the record of action.started, and
// the observation before, which Finish needs. Changed, when set, is a
// change of the workspace since the thread's last observation (see
// Boundary.Since), to be recorded before action.started — or, when the
// action may not start, before its completion.
type Begun struct {
	Started facts.ActionStarted
	Changed *facts.WorkspaceChanged
	before  *Snapshot
	beforeE error
	// watch is the git directories that had no commondir before the
	// action (see commonWatch).
	watch *commonWatch
}

// Begin decides whether the request may run: authority first (a capability
// the thread was not granted ends it as denied, unobserved by the adapter
// because the adapter is not invoked), then the observation before, then the
// precondition (an expected state hash that differs from the observed one
// ends it as failed). When the action may not run, Begin returns its
// completion, to be recorded instead of action.started.
//
// When the workspace changed since the thread's last observation, the
// returned Begun's Changed says how, whether the action may start or not.
func (b *Boundary) Begin(ctx context.Context, req Request) (Begun, *facts.ActionCompleted) {
	if !slices.Contains(b.Granted, req.Capability) {
		c, changed := b.refuse(ctx, req, facts.StatusDenied,
			fmt.Sprintf("capability %q was not granted to this thread (granted: %v)", req.Capability, b.Granted))
		return Begun{Changed: changed}, c
	}
	if b.Prepare != nil && req.Capability == Execute {
		// Only a command starts a sandbox, which makes what it covers: a
		// read or a write of the runtime's own makes nothing.
		b.Prepare()
	}
	before, err := b.observe(ctx)
	var changed *facts.WorkspaceChanged
	if before != nil {
		changed = b.changedSince(ctx, req.ActionID, *before)
	}
	if req.Precondition != "" && before != nil && before.Hash != req.Precondition {
		obs := facts.Observation{Available: true, Before: before.Hash, After: before.Hash, Manifest: b.keepManifest(ctx, *before)}
		c := &facts.ActionCompleted{ActionID: req.ActionID, Observation: obs, Report: facts.Report{
			Status: facts.StatusFailed,
			Error:  fmt.Sprintf("precondition: the request expects state %s, the workspace is at %s; the adapter was not invoked", req.Precondition, before.Hash),
		}}
		c.EffectState = State(req.Capability, c.Report, c.Observation)
		return Begun{Changed: changed}, c
	}
	bg := Begun{Started: facts.ActionStarted{ActionID: req.ActionID}, Changed: changed, before: before, beforeE: err, watch: b.watch()}
	if before != nil {
		bg.Started.ObservedBefore = before.Hash
		bg.Started.Manifest = b.keepManifest(ctx, *before)
	}
	return bg, nil
}

// Deny completes an action a person refused: the adapter is not invoked.
// The change, when set, is how the workspace changed since the thread's
// last observation (see Boundary.Since), to be recorded before the
// completion.
func (b *Boundary) Deny(ctx context.Context, req Request, why string) (facts.ActionCompleted, *facts.WorkspaceChanged) {
	c, changed := b.refuse(ctx, req, facts.StatusDenied, why)
	return *c, changed
}

// refuse completes an action that was not allowed to run. Nothing ran, so
// one reading stands for before and after.
func (b *Boundary) refuse(ctx context.Context, req Request, status facts.ReportStatus, why string) (*facts.ActionCompleted, *facts.WorkspaceChanged) {
	c := &facts.ActionCompleted{ActionID: req.ActionID, Report: facts.Report{Status: status, Error: why}}
	var changed *facts.WorkspaceChanged
	if snap, err := b.observe(ctx); snap != nil {
		changed = b.changedSince(ctx, req.ActionID, *snap)
		c.Observation = facts.Observation{Available: true, Before: snap.Hash, After: snap.Hash, Manifest: b.keepManifest(ctx, *snap)}
	} else if err != nil {
		c.Observation.Error = err.Error()
	}
	c.EffectState = State(req.Capability, c.Report, c.Observation)
	return c, changed
}

// changedSince returns the record of a change between the thread's last
// observation (Since) and now, or nil when there is none to record: no
// earlier observation, or the same hash. The paths are listed when the
// earlier listing was kept and can be read; a listing that cannot be read
// leaves the inventory empty, and the hashes still say that something
// changed.
func (b *Boundary) changedSince(ctx context.Context, actionID string, now Snapshot) *facts.WorkspaceChanged {
	since := b.Since
	if since.Hash == "" || since.Seq == 0 || since.Hash == now.Hash {
		return nil
	}
	rec := &facts.WorkspaceChanged{ActionID: actionID, By: facts.ByUnknown, Since: since.Seq, Before: since.Hash, After: now.Hash}
	if since.Manifest != "" && b.Blobs != nil {
		// A reading whose manifest the Workspace kept lately is compared
		// as a tree; any other is loaded.
		if w, ok := b.Observer.(*Workspace); ok && now.tree != nil && now.Files == nil {
			if prev := w.keptReading(since.Manifest, since.Hash); prev != nil {
				rec.Changed = treeDiff(prev, now.tree)
				return rec
			}
		}
		if prev, err := LoadManifest(ctx, b.Blobs, since.Manifest); err == nil && prev.Hash == since.Hash {
			rec.Changed = Diff(prev, now)
		}
	}
	return rec
}

// Ended is how an action that started ended: Completed (with the check's
// verdict when the request declared one), or Interrupted — never both.
type Ended struct {
	Completed *facts.ActionCompleted
	Check     *facts.CheckRecorded
	// Interrupted: ctx was cancelled while the adapter worked and it did
	// not report success. It was stopped (the adapter honours ctx: a
	// command gets SIGTERM, then SIGKILL), the runtime observed the
	// workspace, and no check ran: the call did not finish, so there is
	// nothing to check it against.
	Interrupted *facts.ActionInterrupted
}

// observeAfterCancel bounds the observation of an action interrupted by
// a cancelled context: the caller asked to stop, and waits. A reading not
// made within it is not recorded, and the effect is not known.
const observeAfterCancel = 10 * time.Second

// Finish invokes the adapter and ends the action. It completes it — the
// adapter's report (a panic or an error becomes a failed report), the
// runtime's own observation after, the effect state, and, when the
// request declares one, the check's verdict; an observer that fails
// leaves the observation unavailable, with its error kept. Or, when ctx
// was cancelled while the adapter worked and the adapter did not report
// success, Finish records it as interrupted (see Ended): what the runtime
// observed then, and what the adapter said before it stopped — a failure
// that the cancellation caused is not the action's result. (A success
// reported despite the cancellation is the action's result, as an effect
// that returns no error is a success: the work was done.)
func (b *Boundary) Finish(ctx context.Context, req Request, bg Begun, adapter Adapter) Ended {
	var entry *ledgerEntry
	if b.Ledger != nil && b.Observer != nil {
		entry = b.Ledger.begin(b.Thread, req, ownFilesOf(b.Observer))
	}
	report := invoke(ctx, adapter, req)
	if ctx.Err() != nil && report.Status != facts.StatusSucceeded {
		in := b.cancelled(ctx, bg, report)
		if entry != nil {
			b.Ledger.end(entry, in.Changed)
		}
		return Ended{Interrupted: in}
	}
	// The record must be completed even when the run was cancelled while
	// the adapter worked: look, and check, regardless. What the action
	// planted where git would run it is taken away first.
	ctx = context.WithoutCancel(ctx)
	removed := bg.watch.remove()
	after, afterErr := b.observe(ctx)
	c := facts.ActionCompleted{ActionID: req.ActionID, Report: report}
	c.Observation, c.Observation.Changed = observation(bg.before, bg.beforeE, after, afterErr)
	c.Observation.Removed = removed
	if entry != nil {
		c.Observation.Others, c.Observation.Unrecorded = b.Ledger.end(entry, c.Observation.Changed)
	}
	if after != nil && c.Observation.Available {
		c.Observation.Manifest = b.keepManifest(ctx, *after)
	}
	if req.Check == nil {
		c.EffectState = State(req.Capability, c.Report, c.Observation)
		return Ended{Completed: &c}
	}
	check := Decide(ctx, req.ActionID, *req.Check, CheckEnv{Root: b.Root, Changed: c.Observation.Changed, Observed: c.Observation.Available,
		Sandbox: req.Sandbox, Commands: b.Commands, Report: c.Report})
	c.EffectState = StateChecked(req.Capability, c.Report, c.Observation, &check)
	return Ended{Completed: &c, Check: &check}
}

// cancelled records an action whose run was cancelled while its adapter
// worked: the adapter has returned, so it stopped; the runtime looks now,
// within observeAfterCancel, and compares with the reading before.
func (b *Boundary) cancelled(ctx context.Context, bg Begun, report facts.Report) *facts.ActionInterrupted {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), observeAfterCancel)
	defer cancel()
	rec := facts.ActionInterrupted{ActionID: bg.Started.ActionID, ObservedBefore: bg.Started.ObservedBefore, Cancelled: true, Report: &report}
	rec.Removed = bg.watch.remove()
	now, err := b.observe(ctx)
	if err != nil || now == nil {
		return &rec
	}
	rec.ObservedNow = now.Hash
	rec.Manifest = b.keepManifest(ctx, *now)
	if bg.before != nil {
		rec.Changed = Diff(*bg.before, *now)
	}
	return &rec
}

// watch notes the git directories of the workspace that have no
// commondir now, just after the reading before an action (see
// commonWatch); nil when nobody observes.
func (b *Boundary) watch() *commonWatch {
	switch o := b.Observer.(type) {
	case nil:
		return nil
	case *Workspace:
		return watchCommondirs(o.Root(), o.Named)
	default:
		return watchCommondirs(b.Root, nil)
	}
}

// plantedSince removes what Finish would have (see commonWatch) after an
// action whose process died: a commondir in a git directory of the
// workspace (as the Observer's last reading finds them) that the reading
// before the action does not hold, as a file, a link or a directory with
// anything in it. A git directory outside the workspace is not in a
// reading, so what a dead action made there is not known, and is left.
func (b *Boundary) plantedSince(before Snapshot) []facts.Removal {
	w, ok := b.Observer.(*Workspace)
	if !ok {
		return nil
	}
	had := map[string]bool{}
	for _, f := range before.Listing() {
		if i := strings.Index(f.Path, "/commondir"); i >= 0 && (i+len("/commondir") == len(f.Path) || f.Path[i+len("/commondir")] == '/') {
			had[f.Path[:i+len("/commondir")]] = true
		}
	}
	var dirs []watchedDir
	for _, d := range gitDirsOf(w.Root(), w.Named) {
		if d.root == w.Root() && !had[d.shown] {
			dirs = append(dirs, d)
		}
	}
	return (&commonWatch{dirs: dirs}).remove()
}

// observation puts two readings side by side. It is unavailable unless both
// readings were made.
func observation(before *Snapshot, beforeErr error, after *Snapshot, afterErr error) (facts.Observation, []facts.PathChange) {
	var o facts.Observation
	if before != nil {
		o.Before = before.Hash
	}
	if after != nil {
		o.After = after.Hash
	}
	switch {
	case beforeErr != nil:
		o.Error = "observing before: " + beforeErr.Error()
	case afterErr != nil:
		o.Error = "observing after: " + afterErr.Error()
	}
	if before == nil || after == nil {
		return o, nil
	}
	o.Available = true
	return o, Diff(*before, *after)
}

// invoke runs the adapter and returns its report, turning a panic, an
// error or a report without a known status into a failed report. The
// runtime, not the adapter, times the run.
func invoke(ctx context.Context, adapter Adapter, req Request) (r facts.Report) {
	start := time.Now().UTC()
	defer func() {
		if p := recover(); p != nil {
			r = facts.Report{Status: facts.StatusFailed, Error: fmt.Sprintf("adapter %s panicked: %v", adapter.Name(), p),
				Transcript: string(debug.Stack())}
		}
		r.StartedAt = start.Format(time.RFC3339Nano)
		r.EndedAt = time.Now().UTC().Format(time.RFC3339Nano)
	}()
	if adapter == nil {
		return facts.Report{Status: facts.StatusFailed, Error: fmt.Sprintf("no adapter %q", req.AdapterKey())}
	}
	r, err := adapter.Execute(ctx, req)
	switch {
	case err != nil:
		r.Status = facts.StatusFailed
		if r.Error == "" {
			r.Error = err.Error()
		} else {
			r.Error += "; " + err.Error()
		}
	case r.Status.Validate() != nil:
		r.Error = fmt.Sprintf("adapter %s reported status %q, which is not succeeded, failed or denied", adapter.Name(), r.Status)
		r.Status = facts.StatusFailed
	}
	return r
}

// observe reads the workspace through the Observer: from a [Workspace],
// as a tree without the listing (see Snapshot.Listing).
func (b *Boundary) observe(ctx context.Context) (*Snapshot, error) {
	if b.Observer == nil {
		return nil, nil
	}
	var snap Snapshot
	var err error
	if t, ok := b.Observer.(treeObserver); ok {
		snap, err = t.observeTree(ctx)
	} else {
		snap, err = b.Observer.Observe(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &snap, nil
}

// keepManifest keeps the observation's listing as a blob and returns its
// digest, or "" when nothing keeps blobs: through the observer when it is
// a [ManifestKeeper] (a delta against the last listing it kept), else
// whole. Failing to keep it loses only the changed-path inventory of a
// crash, so the error is not the action's.
func (b *Boundary) keepManifest(ctx context.Context, s Snapshot) string {
	if b.Blobs == nil {
		return ""
	}
	var d string
	var err error
	if k, ok := b.Observer.(ManifestKeeper); ok {
		d, err = k.KeepManifest(ctx, b.Blobs, s)
	} else {
		d, err = keepWhole(ctx, b.Blobs, s)
	}
	if err != nil {
		return ""
	}
	return d
}

// Interrupted records an action found in doubt: started, never completed,
// because the process died while it ran (Finish records one whose run was
// cancelled). It observes now and compares with
// the observation before (when its listing was kept). It never invokes the
// adapter.
//
// When the Ledger's shared file says that the process that began the
// action is alive on this machine (a worker whose lease ran out while it
// was frozen: its command may still be running), nothing is recorded:
// the error matches ErrStillRunning and names the process.
func (b *Boundary) Interrupted(ctx context.Context, started facts.ActionStarted) (facts.ActionInterrupted, error) {
	rec := facts.ActionInterrupted{ActionID: started.ActionID, ObservedBefore: started.ObservedBefore}
	if b.Ledger != nil {
		if pid := b.Ledger.runningElsewhere(b.Thread, started.ActionID); pid != 0 {
			return rec, fmt.Errorf("%w: %s of thread %s was begun by process %d, which is alive: its command may still be running; stop that process (it no longer holds the thread), then resume", ErrStillRunning, started.ActionID, b.Thread, pid)
		}
	}
	now, err := b.observe(ctx)
	if err != nil || now == nil {
		return rec, nil
	}
	var before *Snapshot
	if started.Manifest != "" && b.Blobs != nil {
		if s, err := LoadManifest(ctx, b.Blobs, started.Manifest); err == nil {
			before = &s
		}
	}
	if before != nil {
		// A commondir the reading before did not hold, in a git directory
		// the reading now finds, is the dead action's: taken away, as
		// Finish would have (see commonWatch), and looked at again.
		if rec.Removed = b.plantedSince(*before); len(rec.Removed) > 0 {
			if again, err := b.observe(ctx); err == nil && again != nil {
				now = again
			}
		}
	}
	rec.ObservedNow = now.Hash
	rec.Manifest = b.keepManifest(ctx, *now)
	if before == nil {
		return rec, nil
	}
	rec.Changed = Diff(*before, *now)
	if b.Ledger != nil && len(rec.Changed) > 0 {
		// The dead process's ledger entry, if the shared file still
		// holds it, tells its own output files and the others' changes
		// apart.
		rec.Changed, rec.Own, rec.Others, rec.Unrecorded = b.Ledger.inDoubt(b.Thread, started.ActionID, rec.Changed, ownNowIn(b.Observer))
	}
	return rec, nil
}

// State derives the effect state from the observation; the report only
// tells an unchanged success from an unchanged failure, and the capability
// tells whether a change was the point:
//
//   - reported: no reading before or after — nobody looked;
//   - observed: the observed scope changed — something moved, not
//     necessarily the intended thing (with a failed report, a partial
//     write; for a read, something moved that should not have);
//   - unknown: a write reported success and nothing changed — the report
//     and the reading disagree, and a person must settle it;
//   - none: nothing changed, and nothing claimed otherwise: a failure or
//     a denial, or a read or a command that succeeded without changing the
//     workspace. A command's result is its output and exit code, which the
//     report keeps; only a declared check can say it did what was meant.
//
// A report in doubt (facts.Report.InDoubt) of anything but a read is
// unknown, whatever was observed: the adapter does not know whether its
// effect happened, and a person settles it.
func State(c Capability, r facts.Report, o facts.Observation) facts.EffectState {
	switch {
	case r.InDoubt && c != Read:
		return facts.EffectUnknown
	case !o.Available || o.Before == "" || o.After == "":
		return facts.EffectReported
	case o.Before != o.After || len(o.Removed) > 0:
		// What the runtime removed before it looked, the action made.
		return facts.EffectObserved
	case r.Status == facts.StatusSucceeded && c == Write:
		return facts.EffectUnknown
	default:
		return facts.EffectNone
	}
}

// StateChecked is State for an action whose declared check was decided
// (check; nil when none was declared): a write that reported success,
// changed nothing the observer saw, and whose check passed is none, not
// unknown — what it was to make already held (a file written with the
// content it had), the check says so, and no person need settle it. The
// record keeps the truth side by side: nothing observed changed, and the
// check passed. Anything else is State.
func StateChecked(c Capability, r facts.Report, o facts.Observation, check *facts.CheckRecorded) facts.EffectState {
	s := State(c, r, o)
	if s == facts.EffectUnknown && !r.InDoubt && check != nil && check.Verdict == facts.VerdictPass {
		return facts.EffectNone
	}
	return s
}

// Replay returns the completion recorded for an earlier action with the
// same idempotency key, as the completion of req: the adapter is not
// invoked again.
func Replay(req Request, prior facts.ActionCompleted) facts.ActionCompleted {
	c := prior
	c.ActionID = req.ActionID
	c.Report.Transcript = fmt.Sprintf("idempotency key %q was already completed by action %s; its completion is returned and the adapter was not invoked again",
		req.IdempotencyKey, prior.ActionID)
	return c
}
