package present

import "strconv"

// Plural is a count for a person: n and the noun that agrees with it —
// "1 file", "2 files", "0 files" — so that a message never says "its 1
// model turns". one and many are the whole noun phrase ("model turn",
// "model turns"; "fact", "facts").
func Plural[N ~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64](n N, one, many string) string {
	word := many
	if n == 1 {
		word = one
	}
	if n < 0 {
		return strconv.FormatInt(int64(n), 10) + " " + word
	}
	return strconv.FormatUint(uint64(n), 10) + " " + word
}
