package drive

import (
	"slices"
	"strconv"
)

// Pick is the value a person's reply gives the field: an empty reply
// takes the field's default; a number picks a choice of its enum (1 the
// first), unless the number is itself one of the choices; anything else
// is the reply as it is (Check says whether the field takes it).
func (f ElicitField) Pick(reply string) string {
	if reply == "" {
		return f.Default
	}
	if n, err := strconv.Atoi(reply); err == nil && n >= 1 && n <= len(f.Enum) && !slices.Contains(f.Enum, reply) {
		return f.Enum[n-1]
	}
	return reply
}
