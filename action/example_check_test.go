package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// A check of one's own, registered at init: the target file is valid
// JSON. Its validator refuses a call that declares it with a target
// outside the workspace when the call is requested, before anyone
// approves it; the check decides from the file, whatever the tool's
// report says.
func init() {
	action.RegisterCheck("json_valid", func(ctx context.Context, spec facts.CheckSpec, env action.CheckEnv) (bool, string, error) {
		b, err := os.ReadFile(filepath.Join(env.Root, filepath.FromSlash(spec.Target)))
		if err != nil {
			return false, spec.Target + " cannot be read", nil
		}
		if !json.Valid(b) {
			return false, fmt.Sprintf("%s is not JSON (the tool said %q)", spec.Target, env.Report.Stdout), nil
		}
		return true, spec.Target + " is JSON", nil
	})
	action.RegisterCheckArgs("json_valid", func(spec facts.CheckSpec) error {
		if !filepath.IsLocal(filepath.FromSlash(spec.Target)) {
			return fmt.Errorf("target %q is not inside the workspace", spec.Target)
		}
		return nil
	})
}

func ExampleRegisterCheck() {
	err := action.ValidateCheck(facts.CheckSpec{Name: "json_valid", Target: "../secrets.json"})
	fmt.Println(errors.Is(err, action.ErrBadCheckArgs))
	err = action.ValidateCheck(facts.CheckSpec{Name: "json_vaild", Target: "a.json"})
	fmt.Println(errors.Is(err, action.ErrUnknownCheck))

	root, _ := os.MkdirTemp("", "harness-check")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "a.json"), []byte(`{"ttl": 300`), 0o644)
	rec := action.Decide(context.Background(), "1-a", facts.CheckSpec{Name: "json_valid", Target: "a.json"},
		action.CheckEnv{Root: root, Report: facts.Report{Status: facts.StatusSucceeded, Stdout: "wrote valid JSON"}})
	fmt.Println(rec.Verdict, rec.Reason)
	// Output:
	// true
	// true
	// fail a.json is not JSON (the tool said "wrote valid JSON")
}
