package facts

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// runs counts the runs of TestBuiltinKindsAreCheckedAtFirstRead.
var runs int

// A built-in kind is only noted at init: its checks run at the first read
// of the registry, and refuse a bad type there as Register would.
func TestBuiltinKindsAreCheckedAtFirstRead(t *testing.T) {
	type sound struct {
		A string `msgpack:"a,omitempty"`
	}
	type withMap struct{ M map[string]int }
	table() // the package's own kinds, checked
	t.Cleanup(func() {
		registerMu.Lock()
		defer registerMu.Unlock()
		builtin = nil
	})

	runs++ // a kind of its own each run (-count)
	kind := Kind(fmt.Sprintf("test.lazy_sound_%d", runs))
	register[sound](kind)
	registerMu.Lock()
	_, isRegistered := registered[kind]
	registerMu.Unlock()
	require.False(t, isRegistered, "noted, not yet checked")
	typ, ok := Registered(kind)
	require.True(t, ok)
	require.Equal(t, "sound", typ.Name())

	require.NotPanics(t, func() { register[withMap]("test.lazy_map") }, "register checks nothing")
	require.PanicsWithValue(t, "facts.Register(\"test.lazy_map\"): payload type facts.withMap: field M: map[string]int is a map; map order would change the payload's bytes",
		func() { table() })
	require.Panics(t, func() { Kinds() }, "a bad kind fails every read after it")
	require.Panics(t, func() { Register[sound]("test.lazy_other") }, "and every Register")
}

// Register sees the built-in kinds noted before it: a kind taken by one
// of them is refused even before the registry was first read.
func TestRegisterSeesUncheckedBuiltins(t *testing.T) {
	type first struct {
		A string `msgpack:"a,omitempty"`
	}
	type second struct {
		B string `msgpack:"b,omitempty"`
	}
	register[first]("test.lazy_taken")
	require.Panics(t, func() { Register[second]("test.lazy_taken") })
	require.NotPanics(t, func() { Register[first]("test.lazy_taken") })
}
