package main

import "github.com/seed-7cc7a084/harness/present"

// The renderings of present that records.go and threads.go call by
// these names.
var (
	cut            = present.Cut
	commandSummary = present.CommandSummary
	tokenCount     = present.TokenCount
)
