package tell

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/present/ask"
	"github.com/seed-7cc7a084/harness/stock"
)

// AskTrust tells each of files (TrustFile) and takes the trust of each
// one that may be trusted (Trustable): with yes, every one as listed;
// with ask, each one the person answers "y" or "yes" at "Trust this
// content of PATH? [y/N]"; otherwise none. trust records it (as
// stock.Place.TrustSource does). It returns how many such files were
// left untrusted. The file's content is the one listed: its digest is
// what trust records, so a file changed after the listing is not the
// one trusted.
func (a *Asker) AskTrust(ctx context.Context, files []stock.SettingsSource, yes, asking bool, trust func(stock.SettingsSource) error) (pending int, err error) {
	for _, s := range files {
		TrustFile(a.W, s)
		if !Trustable(s) {
			continue
		}
		grant := yes
		if !yes && asking {
			answer, err := a.prompt().Line(ctx, fmt.Sprintf("Trust this content of %s? [y/N] ", present.EscapeLine(s.Path)))
			if err != nil && !errors.Is(err, ask.ErrNoAnswer) {
				return pending, err
			}
			grant = strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes")
		}
		if !grant {
			pending++
			if asking {
				a.say("  not trusted: its widening keys stay left out")
			}
			continue
		}
		if err := trust(s); err != nil {
			return pending, err
		}
		a.say("  trusted: sha256 %s (a change to the file makes it untrusted again)", ShortDigest(s.Digest))
	}
	return pending, nil
}
