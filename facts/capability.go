package facts

import "fmt"

// Capability is what an action needs the thread to have been granted:
// "read", "write" or "execute" (package action names them action.Read,
// action.Write and action.Execute; action.Capability is this type). It is
// a string on the wire.
type Capability string

// Validate accepts read, write and execute.
func (c Capability) Validate() error {
	switch c {
	case "read", "write", "execute":
		return nil
	}
	return fmt.Errorf("capability %q: want read, write or execute", string(c))
}
