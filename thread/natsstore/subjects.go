package natsstore

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// The stream layout is documented in doc.go; these functions name its
// subjects.

// layout names the subjects of one stream.
type layout struct{ prefix string }

func (l layout) encodeID(id string) string { return hex.EncodeToString([]byte(id)) }

// threadSubject returns <prefix>.t.<hex id>: the records of id's appends.
func (l layout) threadSubject(id string) string { return l.prefix + ".t." + l.encodeID(id) }

// stageSubject returns <prefix>.s.<hex id>: the parts of id's appends too
// large for one message.
func (l layout) stageSubject(id string) string { return l.prefix + ".s." + l.encodeID(id) }

// streamSubjects are the subjects the stream binds.
func (l layout) streamSubjects() []string {
	return []string{l.prefix + ".t.*", l.prefix + ".s.*"}
}

// Layout 1 (before the one-subject-per-thread layout), for Migrate.

// v1Subjects are the subjects a stream of layout 1 binds.
func (l layout) v1Subjects() []string { return []string{l.prefix + ".f.>", l.prefix + ".c.>"} }

// v1FactSubject returns <prefix>.f.<hex id>.<seq>.
func (l layout) v1FactSubject(id string, seq uint64) string {
	return fmt.Sprintf("%s.f.%s.%d", l.prefix, l.encodeID(id), seq)
}

// v1FirstFacts returns <prefix>.f.*.1, one subject per thread.
func (l layout) v1FirstFacts() string { return l.prefix + ".f.*.1" }

// v1ThreadOf returns the id of a layout 1 fact subject <prefix>.f.<hex
// id>.1.
func (l layout) v1ThreadOf(subj string) (string, error) {
	rest, ok := strings.CutPrefix(subj, l.prefix+".f.")
	if !ok {
		return "", fmt.Errorf("subject %q is not a fact subject of layout 1", subj)
	}
	hexID, _, ok := strings.Cut(rest, ".")
	if !ok {
		return "", fmt.Errorf("fact subject %q has no seq", subj)
	}
	id, err := hex.DecodeString(hexID)
	if err != nil {
		return "", fmt.Errorf("fact subject %q: thread id: %w", subj, err)
	}
	return string(id), nil
}
