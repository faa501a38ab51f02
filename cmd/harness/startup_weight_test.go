package main

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkStartupWeight says where the start of `harness --help` goes,
// beside two baselines in the same run, interleaved: `git --version`, and
// the floor — a program made of nothing but blank imports of every
// package outside this module that a package of this module imports (so
// it runs every package init harness runs, ours aside, and nothing
// else). It reports wall and CPU (user+system of the child) medians and
// the help-vs-git and floor-vs-git ratios (min, median, max of the
// per-iteration ratio).
//
// After timing it runs `harness --help` 20 times with
// GODEBUG=inittrace=1 and logs a table: per module, the median init time
// and the bytes of the binary's symbols of its packages; and for each
// provider SDK, the packages only it brings in (those no other path from
// main reaches), with their init time and bytes.
func BenchmarkStartupWeight(b *testing.B) {
	goCmd, git, dir := startupTools(b)
	harness := buildTo(b, goCmd, dir, "harness", ".")
	graph := importGraph(b, goCmd)
	floor := buildFloor(b, goCmd, dir, graph)

	type run struct{ wall, cpu time.Duration }
	timed := func(name string, args ...string) run {
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = nil, nil
		start := time.Now()
		require.NoError(b, cmd.Run())
		wall := time.Since(start)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return run{wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	}
	timed(harness, "--help") // the page cache
	timed(floor)
	var help, gitv, flo []run
	var helpGit, floorGit []float64
	b.ResetTimer()
	for range b.N {
		g := timed(git, "--version")
		h := timed(harness, "--help")
		f := timed(floor)
		help, gitv, flo = append(help, h), append(gitv, g), append(flo, f)
		helpGit = append(helpGit, float64(h.wall)/float64(g.wall))
		floorGit = append(floorGit, float64(f.wall)/float64(g.wall))
	}
	b.StopTimer()
	spread := func(name string, r []float64) {
		slices.Sort(r)
		b.ReportMetric(r[0], name+"-min")
		b.ReportMetric(r[len(r)/2], name+"-med")
		b.ReportMetric(r[len(r)-1], name+"-max")
	}
	spread("help-vs-git", helpGit)
	spread("floor-vs-git", floorGit)
	ms := func(rs []run, cpu bool) float64 {
		var ds []float64
		for _, r := range rs {
			d := r.wall
			if cpu {
				d = r.cpu
			}
			ds = append(ds, float64(d)/1e6)
		}
		return median(ds)
	}
	b.ReportMetric(ms(help, false), "help-ms")
	b.ReportMetric(ms(help, true), "help-cpu-ms")
	b.ReportMetric(ms(flo, false), "floor-ms")
	b.ReportMetric(ms(flo, true), "floor-cpu-ms")
	b.ReportMetric(ms(gitv, false), "git-ms")
	b.ReportMetric(ms(gitv, true), "git-cpu-ms")

	w := weigh(b, goCmd, harness, graph, 20)
	b.Log("\n" + w.table)
	b.ReportMetric(w.total, "init-ms")
	b.ReportMetric(w.ours, "init-ours-ms")
}

// graph is the import graph of the harness command: each package's
// imports, and the module of each package.
type graph struct {
	main    string
	imports map[string][]string
	module  map[string]string // "" for the standard library
}

// importGraph lists the packages the harness command is built from.
func importGraph(b *testing.B, goCmd string) graph {
	out, err := exec.Command(goCmd, "list", "-deps", "-json=ImportPath,Imports,Module,Standard", ".").Output()
	require.NoError(b, err)
	g := graph{imports: map[string][]string{}, module: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
			Module     *struct{ Path string }
		}
		require.NoError(b, dec.Decode(&p))
		g.imports[p.ImportPath] = p.Imports
		if p.Module != nil {
			g.module[p.ImportPath] = p.Module.Path
		} else {
			g.module[p.ImportPath] = ""
		}
		g.main = p.ImportPath // -deps lists the named package last
	}
	return g
}

// ours is this module's path.
func (g graph) ours() string { return g.module[g.main] }

// buildFloor builds a program of blank imports of every package outside
// this module that a package of it imports. It is compiled inside the
// module (through an overlay, so nothing is written to the checkout), so
// the same versions go into it.
func buildFloor(b *testing.B, goCmd, dir string, g graph) string {
	var edges []string
	for p, imps := range g.imports {
		if g.module[p] != g.ours() {
			continue
		}
		for _, imp := range imps {
			// "C" is cgo in a package of ours (package main's malloc
			// setting), not a package outside: a program built in
			// an overlay's directory cannot use cgo, which runs there.
			if g.module[imp] != g.ours() && imp != "C" {
				edges = append(edges, imp)
			}
		}
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	var src strings.Builder
	src.WriteString("// Command floor only imports what harness imports.\npackage main\n\nimport (\n")
	for _, e := range edges {
		fmt.Fprintf(&src, "\t_ %q\n", e)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	file := filepath.Join(dir, "floor.go")
	require.NoError(b, os.WriteFile(file, []byte(src.String()), 0o600))
	wd, err := os.Getwd()
	require.NoError(b, err)
	virtual := filepath.Join(wd, "startupfloor", "main.go")
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{virtual: file}})
	require.NoError(b, err)
	overlayFile := filepath.Join(dir, "overlay.json")
	require.NoError(b, os.WriteFile(overlayFile, overlay, 0o600))
	floor := filepath.Join(dir, "floor")
	out, err := exec.Command(goCmd, "build", "-overlay", overlayFile, "-o", floor, "./startupfloor").CombinedOutput()
	require.NoError(b, err, "%s", out)
	return floor
}

// weight is what weigh found.
type weight struct {
	table       string
	total, ours float64 // median ms of init, all packages and this module's
}

// weigh runs bin --help n times with inittrace and sums init time and
// symbol bytes by module, and by what each provider SDK alone brings in.
func weigh(b *testing.B, goCmd, bin string, g graph, n int) weight {
	initLine := regexp.MustCompile(`^init (\S+) @\S+ ms, ([0-9.]+) ms clock`)
	perPkg := map[string][]float64{}
	var totals []float64
	for range n {
		cmd := exec.Command(bin, "--help")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(b, cmd.Run())
		total := 0.0
		for line := range strings.Lines(stderr.String()) {
			m := initLine.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			v, err := strconv.ParseFloat(m[2], 64)
			require.NoError(b, err)
			pkg := unescapePkg(m[1])
			if pkg == "main" {
				pkg = g.main
			}
			perPkg[pkg] = append(perPkg[pkg], v)
			total += v
		}
		totals = append(totals, total)
	}
	initMs := map[string]float64{}
	for p, vs := range perPkg {
		for len(vs) < n {
			vs = append(vs, 0)
		}
		initMs[p] = median(vs)
	}
	size := symbolBytes(b, bin)
	var all int64
	for _, s := range size {
		all += s
	}
	modOf := func(p string) string {
		if m, ok := g.module[p]; ok {
			return cmp.Or(m, "std")
		}
		return "std" // runtime-only symbols, vendored std packages
	}
	modMs, modSize := map[string]float64{}, map[string]int64{}
	for p, v := range initMs {
		modMs[modOf(p)] += v
	}
	for p, s := range size {
		modSize[modOf(p)] += s
	}
	var t strings.Builder
	info, err := os.Stat(bin)
	require.NoError(b, err)
	fmt.Fprintf(&t, "init (median of %d runs): %.2f ms; binary %.1f MB, %.1f MB of it in symbols (the rest: pclntab, DWARF, symbol tables)\n",
		n, median(totals), float64(info.Size())/1e6, float64(all)/1e6)
	fmt.Fprintf(&t, "%-52s %8s %9s %6s\n", "module", "init ms", "bytes MB", "bytes%")
	mods := slices.Collect(maps.Keys(modSize))
	for m := range modMs {
		if _, ok := modSize[m]; !ok {
			mods = append(mods, m)
		}
	}
	slices.SortFunc(mods, func(a, c string) int {
		return cmp.Or(cmp.Compare(modMs[c], modMs[a]), cmp.Compare(modSize[c], modSize[a]), strings.Compare(a, c))
	})
	for _, m := range mods {
		if modMs[m] < 0.005 && modSize[m] < 100_000 {
			continue
		}
		fmt.Fprintf(&t, "%-52s %8.3f %9.2f %5.1f%%\n", m, modMs[m], float64(modSize[m])/1e6, 100*float64(modSize[m])/float64(all))
	}
	fmt.Fprintf(&t, "\nwhat only one SDK brings in (packages no other import path from main reaches):\n")
	for _, sdk := range []string{"github.com/openai/openai-go/v3", "github.com/anthropics/anthropic-sdk-go/v2"} {
		only := g.onlyThrough(sdk)
		var ms float64
		var bytes int64
		byMod := map[string]bool{}
		for p := range only {
			ms += initMs[p]
			bytes += size[p]
			byMod[cmp.Or(g.module[p], "std")] = true
		}
		fmt.Fprintf(&t, "%-52s %8.3f %9.2f %5.1f%%  (%d packages of %s)\n", sdk, ms, float64(bytes)/1e6, 100*float64(bytes)/float64(all),
			len(only), strings.Join(slices.Sorted(maps.Keys(byMod)), ", "))
	}
	w := weight{table: t.String(), total: median(totals)}
	for p, v := range initMs {
		if g.module[p] == g.ours() {
			w.ours += v
		}
	}
	return w
}

// onlyThrough is the packages that main reaches only through packages of
// module mod (those included).
func (g graph) onlyThrough(mod string) map[string]bool {
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		if seen[p] || g.module[p] == mod {
			return
		}
		seen[p] = true
		for _, imp := range g.imports[p] {
			walk(imp)
		}
	}
	walk(g.main)
	only := map[string]bool{}
	for p := range g.imports {
		if !seen[p] {
			only[p] = true
		}
	}
	return only
}

// symbolBytes sums the sizes of the binary's symbols that are in the file
// (not bss) by the package each belongs to (its name's package path);
// symbols of no package count as "runtime".
func symbolBytes(b *testing.B, bin string) map[string]int64 {
	f, err := elf.Open(bin)
	require.NoError(b, err)
	defer f.Close()
	syms, err := f.Symbols()
	require.NoError(b, err)
	out := map[string]int64{}
	for _, s := range syms {
		if int(s.Section) >= len(f.Sections) || f.Sections[s.Section].Type == elf.SHT_NOBITS {
			continue // not in the file (bss), or no section
		}
		out[symbolPkg(s.Name)] += int64(s.Size)
	}
	return out
}

// symbolPkg is the package path in a Go symbol's name:
// "github.com/x/y.(*T).M", "type:*github.com/x/y.T",
// "go:itab.*github.com/x/y.T,io.Reader", "github.com/x/y.F[go.shape.int]".
func symbolPkg(name string) string {
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:", "go:itab."} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			name = rest
			break
		}
	}
	if strings.HasPrefix(name, "go:") || strings.HasPrefix(name, "runtime.") {
		return "runtime"
	}
	name = strings.TrimLeft(name, "*[]0123456789")
	if i := strings.IndexAny(name, "[,"); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return "runtime"
	}
	return unescapePkg(name[:slash+1+dot])
}

// unescapePkg undoes the escaping of '.' in the last element of a package
// path in symbol names and the init trace ("nats%2ego").
func unescapePkg(p string) string { return strings.ReplaceAll(p, "%2e", ".") }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
