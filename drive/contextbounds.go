package drive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// SetContextBounds records b as the bounds the thread's conversation is
// kept within from now on (context.bounds_set, by who sets them): they
// replace the bounds its system.configured recorded when it started, so
// a context window given when a thread is resumed is not ignored. The key
// of the post derives from b and the thread's head, so a command run again
// on an unchanged thread appends it once.
func SetContextBounds(ctx context.Context, th *harness.Thread, b facts.ContextBounds, by string) (harness.Posted, error) {
	if err := b.Validate(); err != nil {
		return harness.Posted{}, fmt.Errorf("context bounds of %s: %w", th.ID(), err)
	}
	v, err := th.View(ctx)
	if err != nil {
		return harness.Posted{}, err
	}
	d, err := facts.NewDraft(facts.KindContextBoundsSet, "", facts.ContextBoundsSet{Bounds: b, By: by})
	if err != nil {
		return harness.Posted{}, fmt.Errorf("context bounds of %s: %w", th.ID(), err)
	}
	sum := sha256.Sum256(d.Data)
	key := "bounds-" + strconv.FormatUint(v.Head.Seq, 10) + "-" + hex.EncodeToString(sum[:6])
	return th.Post(ctx, d, key)
}
