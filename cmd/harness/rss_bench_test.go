package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childRun is what one run of a child process cost: its wall and CPU
// time, its peak resident set, and the split of the resident set at the
// largest one sampled while it ran: anonymous memory (the Go heap,
// Pebble's cache and memtables) and file pages (mostly the binary's own
// code and read-only data, mapped from the page cache).
//
// The peak is the largest VmHWM sampled (the high-water mark of the
// process's memory since it started the binary, so the last sample holds
// all but the last few milliseconds), not the kernel's maxrss of the
// child: os/exec starts a child sharing this process's memory until it
// executes the binary, and Linux keeps the high-water mark of that shared
// memory — this benchmark's own, with a 100,000-fact log written — as the
// child's maxrss, which then says the same for 1,000 facts as for
// 100,000. rusageMax keeps that number, for comparison.
type childRun struct {
	wall, cpu  time.Duration
	peak       int64 // bytes: the largest VmHWM sampled
	anon, file int64 // bytes, at the sample with the largest anon+file
	rusageMax  int64 // bytes: the kernel's maxrss of the child (see above)
}

// runMeasured runs cmd, sampling /proc/PID/status every few milliseconds
// while it runs (Linux; elsewhere the split stays zero).
func runMeasured(b *testing.B, cmd *exec.Cmd) childRun {
	b.Helper()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("%s: %v", cmd, err)
	}
	var (
		r    childRun
		mu   sync.Mutex // guards r's peak, anon and file
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	status := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status")
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if hwm, anon, file, ok := residentSplit(status); ok {
				mu.Lock()
				if anon+file > r.anon+r.file {
					r.anon, r.file = anon, file
				}
				r.peak = max(r.peak, hwm, anon+file)
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	r.wall = time.Since(start)
	close(done)
	wg.Wait()
	if err != nil {
		b.Fatalf("%s: %v\n%s", cmd, err, errb.String())
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rusageMax = ru.Maxrss << 10 // KiB on Linux
	}
	return r
}

// residentSplit reads VmHWM, RssAnon and RssFile (bytes) from a /proc
// status file; ok is false once the process is gone.
func residentSplit(path string) (hwm, anon, file int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found || (k != "VmHWM" && k != "RssAnon" && k != "RssFile") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		switch k {
		case "VmHWM":
			hwm = n << 10
		case "RssAnon":
			anon = n << 10
		default:
			file = n << 10
		}
		ok = true
	}
	return hwm, anon, file, ok
}

// dirBytes is the size of the files under dir: a store's tables (as
// compressed on disk), its write-ahead log and the rest.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// builtHarness builds the harness binary — what a person runs, not this
// test binary, whose code (the tests, testscript, a NATS server) and
// start-up are larger — into a temporary directory and returns its path.
// HARNESS_BENCH_BIN names a binary to run instead (one built from
// another commit, to compare).
func builtHarness(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("HARNESS_BENCH_BIN"); bin != "" {
		return bin
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build harness with")
	}
	out := filepath.Join(b.TempDir(), "harness")
	cmd := exec.Command(gobin, "build", "-o", out, ".")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}
