// Package serve is the server of a workspace's store: one process holds
// the store and serves it to everyone else — the other harness commands
// of the workspace through a local socket (package thread/socketstore), people
// through a web page, and programs through an HTTP JSON API with a live
// stream of each thread's facts (Server-Sent Events), and of what a thread
// does between two facts (its progress: the model's text, a command's
// output; see drive.Event), whether the server drives it or another
// process does through the socket (see remoteProgress).
//
// Everything the page and the API show is read from the one view every
// reader uses: harness.View and the coding scheduler's reading, through
// drive.Inspect; the record told back is audit.Replay's and
// audit.VerifyLog's verdict; an undo preview is rewind.PlanUndo's (its
// diffs rewind.UndoPlan.Changes, rendered by present.DiffOf), a fork's is
// the view of the log up to its seq; an undo or a fork from the page is
// rewind.UndoSeen's or rewind.Fork's, as harness undo and fork do them.
// Nothing here folds a log with rules of its own.
//
// # Who may act
//
// Every request carries a token: one the server made when it started
// (printed in a URL, as Jupyter does) or one from the settings, each
// naming a person. A browser that opens the URL keeps the token in a
// cookie (HttpOnly, SameSite=Strict); a program sends it as a bearer
// token. What is done through the server — an approval, a denial, an
// answer, a reconciliation — records the name the token names, never a
// name the request gives. A post from a browser must also carry the page's
// CSRF token (a hidden form field, or the X-CSRF-Token header), and a
// cross-site post is refused whatever it carries; either way nothing is
// appended.
//
// An approval names the digest of the call the person was shown
// (drive.Answer with the request's digest): if the call is not that one,
// the approval is refused. An answer given twice appends once; an answer
// that contradicts one already given is refused (drive.ErrAnswerDiffers).
//
// # The page
//
// The page is html/template output from templates embedded in the binary:
// no build step, nothing fetched at run time. Everything a model wrote —
// text, arguments, file contents, command output — is escaped by the
// templates. The page reads without JavaScript (forms post and redirect);
// with it, the timeline grows as facts are appended and the forms post in
// place. Every link, form, script and redirect of the page is relative
// (the page's <base> is the path back to the server's root), so the page
// and the API work mounted under a path prefix of one's own mux:
//
//	mux.Handle("/harness/", http.StripPrefix("/harness", srv.Handler()))
//
// # Resumes
//
// When a person answers through the server and asks for it (the page
// always does), the server resumes the thread itself, with drive.Drive:
// the model the thread recorded, the approval policy the server was
// given, the stock harness of its workspace. It resumes only threads that
// work in its own workspace; on a shared store (NATS) it shows and
// answers every thread, with the workspace each works in.
package serve
