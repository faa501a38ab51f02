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
// time, its peak resident set (the kernel's maxrss), and the split of the
// resident set at the largest one sampled while it ran: anonymous memory
// (the Go heap, Pebble's cache and memtables) and file pages (mostly the
// binary's own text and read-only data, mapped from the page cache).
type childRun struct {
	wall, cpu      time.Duration
	maxRSS         int64
	anon, file     int64 // bytes, at the sample with the largest anon+file
	sampledAtLeast bool  // a sample was taken
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
		mu   sync.Mutex // guards r's anon, file and sampledAtLeast
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
			if anon, file, ok := residentSplit(status); ok {
				mu.Lock()
				if anon+file > r.anon+r.file {
					r.anon, r.file = anon, file
				}
				r.sampledAtLeast = true
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
		r.maxRSS = ru.Maxrss << 10 // KiB on Linux
	}
	return r
}

// residentSplit reads RssAnon and RssFile (bytes) from a /proc status
// file; ok is false once the process is gone.
func residentSplit(path string) (anon, file int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found || (k != "RssAnon" && k != "RssFile") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if k == "RssAnon" {
			anon = n << 10
		} else {
			file = n << 10
		}
		ok = true
	}
	return anon, file, ok
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
