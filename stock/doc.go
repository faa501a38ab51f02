// Package stock is the stock harness of a directory: where its store is
// (Locate, Place, OpenStore — a Pebble store in .harness/, or a NATS
// JetStream server), its settings (Settings, from the user's, the
// project's and the store's files: LoadLayered, merged with the flags in
// one place, a file inside the workspace widening only once trusted:
// Merge, Widens, TrustFile), the built-in tools of
// package tools confined to it with the coding actor over them (NewStock),
// the services whose observer watches it (Stock.Services), and the models
// a spec names (LoadModel: scripted, OpenAI-compatible, Anthropic), and
// Session: a workspace opened for a front end with the command line's
// settings over its files, the one place every front end builds its
// runtimes (Session.Runtime) and enters a thread's workspace
// (Session.Enter). A session also does, for every front end, what a
// person asks of a store: list its threads (Session.Threads), search
// them (Session.Search), tell one back and verify it (Session.Replay,
// Place.VerifyExport), stop it (Session.Stop), list the effects and undo
// a thread's (Session.Effects, Session.Undo), and rerun threads on
// another model (Session.Rerun). It is the one package that links the vendor SDKs and the NATS client; a
// harness composed in Go without them imports harness and below instead.
package stock
