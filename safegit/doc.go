// Package safegit runs git for the harness itself, in a repository it does
// not trust.
//
// A repository is untrusted input: a command the model ran may have
// planted its config, its hooks or its attributes. Command returns a git
// command whose run executes nothing the repository names — no
// core.fsmonitor, no hook (core.hooksPath), no pager or editor, no signing
// program, no transport (so no ssh command, proxy, askpass or credential
// helper), no external diff or textconv, no filter (clean, smudge,
// process) and no merge driver — with an environment that carries no
// GIT_* variable of the harness's own and reads no system config. What
// cannot be switched off from the command line (a driver whose name holds
// "=") is refused with ErrUnsafe rather than run.
package safegit
