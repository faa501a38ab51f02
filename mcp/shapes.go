package mcp

// The shapes of strings a server or a recorded fact hands harness, checked
// by hand: as regular expressions with counted repeats ({1,256}, {64})
// they cost about a millisecond to compile when the package loads.

// isEventID reports whether s may be an SSE event id harness sends back:
// 1 to 256 bytes of visible ASCII (0x21 to 0x7e).
func isEventID(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// isProtocolRevision reports whether s looks like a protocol revision:
// DDDD-DD-DD in ASCII digits.
func isProtocolRevision(s string) bool {
	if len(s) != 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch {
		case i == 4 || i == 7:
			if s[i] != '-' {
				return false
			}
		case s[i] < '0' || s[i] > '9':
			return false
		}
	}
	return true
}

// isSessionName reports whether s is what a kept session's digest must
// look like, 64 lower-case hex digits: a forged fact names no other file.
func isSessionName(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
