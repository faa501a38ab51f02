package drive

import (
	"bytes"
	"fmt"
)

// YesNo is a yes or a no that may be left unsaid, for the fields of a
// request where "not said" means a default ("resume": yes unless told
// no) or "not this kind of answer" (a question's answer approves
// nothing). In JSON it is true, false, or null — absent with omitempty
// (the zero value, Unsaid) — so a request type needs no *bool.
type YesNo int8

// The values of a YesNo.
const (
	// Unsaid is the zero value: nothing was said.
	Unsaid YesNo = iota
	// Yes is true.
	Yes
	// No is false.
	No
)

// YesNoOf is Yes for true, No for false.
func YesNoOf(b bool) YesNo {
	if b {
		return Yes
	}
	return No
}

// Said reports whether y is Yes or No.
func (y YesNo) Said() bool { return y == Yes || y == No }

// Or is what y says, or def when it says nothing.
func (y YesNo) Or(def bool) bool {
	switch y {
	case Yes:
		return true
	case No:
		return false
	}
	return def
}

// MarshalJSON is true, false or null.
func (y YesNo) MarshalJSON() ([]byte, error) {
	switch y {
	case Yes:
		return []byte("true"), nil
	case No:
		return []byte("false"), nil
	case Unsaid:
		return []byte("null"), nil
	}
	return nil, fmt.Errorf("yes/no %d: %w", int8(y), ErrNotYesNo)
}

// UnmarshalJSON reads true, false or null; anything else (a string, a
// number) is ErrNotYesNo.
func (y *YesNo) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		*y = Yes
	case "false":
		*y = No
	case "null":
		*y = Unsaid
	default:
		return fmt.Errorf("%.20q: %w", b, ErrNotYesNo)
	}
	return nil
}
