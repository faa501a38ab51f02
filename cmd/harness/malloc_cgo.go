//go:build linux && cgo

package main

/*
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

// harness_one_malloc_arena runs as the binary loads, before the Go
// runtime starts a thread: see below. A person's own
// MALLOC_ARENA_MAX, or an arena_max in GLIBC_TUNABLES, is left to glibc.
// (On a libc without M_ARENA_MAX it does nothing.)
__attribute__((constructor)) static void harness_one_malloc_arena(void) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	const char *t = getenv("GLIBC_TUNABLES");
	if (getenv("MALLOC_ARENA_MAX") != NULL || (t != NULL && strstr(t, "arena_max") != NULL)) {
		return;
	}
	mallopt(M_ARENA_MAX, 1);
#endif
}

*/
import "C"

// The constructor above tells glibc's malloc, as the binary loads, to
// keep one arena for all threads.
//
// Only Pebble allocates with C's malloc in harness (its block cache and
// memtables, in a build with cgo), and glibc gives a thread that
// allocates while the arenas it would share are busy an arena of its
// own, up to eight per core. A
// command that reads a long log through churns the cache block by block
// from whichever thread its goroutine runs on, and each arena keeps the
// blocks freed in it: `replay --verify` of 100,000 facts held 21 MB of C
// heap in five arenas for 7 MB in use. In one arena the freed blocks are
// used again (10 MiB less at its peak, the same CPU). The cost is one
// lock for Pebble's allocations, made only on a cache miss or a new
// memtable. The limit must be set before the runtime starts its threads
// (mallopt after that left the run with five arenas still), hence a constructor.
