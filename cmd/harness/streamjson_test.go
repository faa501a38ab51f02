package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

// streamSchema is docs/stream.schema.json, compiled once.
var streamSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	path, err := filepath.Abs("../../docs/stream.schema.json")
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	return c.Compile(path)
})

// streamLines checks a stream (-o stream-json, log -f -o jsonl): every
// line is valid against docs/stream.schema.json, the facts' seqs follow
// one another with no gap and none twice, and the last line, and only
// it, is the result. It returns the facts' JSON as the lines carry it,
// the progress events and the result.
func streamLines(out string) (factJSON map[uint64]string, first uint64, progress []drive.Event, result drive.Result, err error) {
	schema, err := streamSchema()
	if err != nil {
		return nil, 0, nil, result, fmt.Errorf("the schema: %w", err)
	}
	factJSON = map[uint64]string{}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var next uint64
	for i, line := range lines {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			return nil, 0, nil, result, fmt.Errorf("line %d is not JSON: %v: %s", i+1, err, line)
		}
		if err := schema.Validate(v); err != nil {
			return nil, 0, nil, result, fmt.Errorf("line %d does not fit the schema: %v\n%s", i+1, err, line)
		}
		var l struct {
			Type     drive.LineType  `json:"type"`
			Fact     json.RawMessage `json:"fact"`
			Progress *drive.Event    `json:"progress"`
			Result   *drive.Result   `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			return nil, 0, nil, result, fmt.Errorf("line %d: %v", i+1, err)
		}
		if (l.Type == drive.LineResult) != (i == len(lines)-1) {
			return nil, 0, nil, result, fmt.Errorf("line %d of %d is a %s line: the result is the last line, and the only one", i+1, len(lines), l.Type)
		}
		switch l.Type {
		case drive.LineFact:
			var f facts.Fact
			if err := f.UnmarshalJSON(l.Fact); err != nil {
				return nil, 0, nil, result, fmt.Errorf("line %d: the fact does not parse back: %v", i+1, err)
			}
			if next == 0 {
				first, next = f.Seq, f.Seq
			}
			if f.Seq != next {
				return nil, 0, nil, result, fmt.Errorf("line %d: fact seq %d, want %d: every fact once, in order", i+1, f.Seq, next)
			}
			next++
			factJSON[f.Seq] = string(l.Fact)
		case drive.LineProgress:
			progress = append(progress, *l.Progress)
		case drive.LineResult:
			result = *l.Result
		}
	}
	return factJSON, first, progress, result, nil
}

// cmdStreamCheck checks the last command's stdout as a stream (see
// streamLines), and that each fact in it is, byte for byte, the line of
// its seq in LOG (harness log -o jsonl): streamcheck STREAM LOG [STATUS]. With
// STATUS, the result's status must be it. The progress events are
// written to progress.jsonl in $WORK, one a line, for the script to
// look at.
func cmdStreamCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: streamcheck STREAM LOG.jsonl [STATUS]")
	}
	got, first, progress, result, err := streamLines(ts.ReadFile(args[0]))
	if err != nil {
		ts.Fatalf("stream: %v", err)
	}
	log := strings.Split(strings.TrimSuffix(ts.ReadFile(args[1]), "\n"), "\n")
	for seq := first; seq < first+uint64(len(got)); seq++ {
		if seq > uint64(len(log)) {
			ts.Fatalf("fact %d is in the stream, not in %s", seq, args[1])
		}
		if got[seq] != log[seq-1] {
			ts.Fatalf("fact %d differs from %s's:\n%s\n%s", seq, args[1], got[seq], log[seq-1])
		}
	}
	if len(args) == 3 && result.Status != args[2] {
		ts.Fatalf("the result's status is %q, want %q", result.Status, args[2])
	}
	var b bytes.Buffer
	for _, e := range progress {
		js, _ := json.Marshal(e)
		b.Write(append(js, '\n'))
	}
	ts.Check(os.WriteFile(ts.MkAbs("progress.jsonl"), b.Bytes(), 0o644))
	ts.Logf("stream: facts %d..%d, %d progress events, result %s (exit %d)", first, first+uint64(len(got))-1, len(progress), result.Status, result.Exit)
}
