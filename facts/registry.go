package facts

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
)

// A kind is either registered, with a Go payload type, or unregistered.
//
// A registered kind's payload is its type encoded as a msgpack map keyed by
// field name, in field order, with empty fields left out. Leaving empty
// fields out is what keeps old facts stable when a type grows: a field added
// later is empty in every old payload, so decoding and re-encoding an old
// payload reproduces its bytes (and its hash). Add fields anywhere; never
// rename, retype or reorder existing ones. A payload fits its kind when it
// is one msgpack map that decodes into the type with no unknown field and no
// wrong type, and passes the type's Validate method, if it has one.
//
// An unregistered kind's payload is a JSON value (null, a bool, a number, a
// string, an array or an object with string keys, nested at most maxDepth
// deep) stored as canonical msgpack: object keys sorted, integers in their
// smallest encoding, floats as float64. JSON null is stored as no bytes at
// all. Such a payload fits its kind when it is empty or one well-formed
// msgpack value.

// entry is what the registry knows about a registered kind.
type entry struct {
	kind Kind
	typ  reflect.Type
	// check decodes data strictly and validates it: "fits its kind".
	check func(data []byte) error
	// encode checks payload's type, validates it and encodes it.
	encode func(payload any) ([]byte, error)
	// toJSON decodes data leniently and renders it as JSON.
	toJSON func(data []byte) ([]byte, error)
	// fromJSON parses JSON strictly, validates it and encodes it.
	fromJSON func(raw []byte) ([]byte, error)
}

// kindTable is one version of the registry. It is never modified after it
// is published.
type kindTable struct {
	entries map[Kind]*entry
	// names maps a kind's bytes to the registered Kind, so decoding a
	// stored kind can reuse the string instead of allocating one.
	names map[string]Kind
}

var (
	// registry is the current kindTable. Readers load it without locking
	// (see table); registrations are published into a copy of it, swapped
	// in, at the first read after them.
	registry atomic.Pointer[kindTable]
	// unpublished says some registrations are not yet in registry.
	unpublished atomic.Bool
	// registerMu guards builtin, registered, pending and checked, and
	// serializes publishing.
	registerMu sync.Mutex
	// builtin is this package's own kinds (register), not yet checked;
	// registered is every checked kind's payload type, published or not;
	// pending, the entries checked since the last publication; checked,
	// the types deterministic found sound. Registering is cheap (an init
	// of each package that has kinds does it): the table is built once,
	// when first read, not copied at each registration.
	builtin    []builtinKind
	registered = map[Kind]reflect.Type{}
	pending    []*entry
	checked    = map[reflect.Type]bool{}
)

// builtinKind is a kind of this package, registered by its init and
// checked at the first read of the registry (or the first Register), so
// that a program's start pays nothing for kinds it does not read.
type builtinKind struct {
	kind Kind
	typ  reflect.Type
	// entry makes the kind's entry (newEntry for its type).
	entry func(Kind) *entry
}

// register is Register for this package's own kinds, from its init
// functions: it only notes the kind. Its checks run, and panic as
// Register's would, when the registry is first read (checkBuiltin); the
// tests read it, so a bad built-in kind fails them.
func register[T any](kind Kind) {
	registerMu.Lock()
	defer registerMu.Unlock()
	builtin = append(builtin, builtinKind{kind: kind, typ: reflect.TypeFor[T](), entry: newEntry[T]})
	unpublished.Store(true)
}

// checkBuiltin checks the built-in kinds noted so far, in the order they
// were registered, as Register checks a kind, and adds them to pending.
// registerMu is held.
func checkBuiltin() {
	for _, b := range builtin {
		add(b.kind, b.typ, b.entry)
	}
	builtin = nil
}

// table is the registry, with every registration so far published.
func table() *kindTable {
	if unpublished.Load() {
		publish()
	}
	return registry.Load()
}

// publish swaps in a table with the pending registrations.
func publish() {
	registerMu.Lock()
	defer registerMu.Unlock()
	checkBuiltin()
	if len(pending) == 0 {
		unpublished.Store(false) // nothing to publish: reads need not lock
		return
	}
	old := registry.Load()
	n := len(pending)
	if old != nil {
		n += len(old.entries)
	}
	next := &kindTable{entries: make(map[Kind]*entry, n), names: make(map[string]Kind, n)}
	if old != nil {
		maps.Copy(next.entries, old.entries)
		maps.Copy(next.names, old.names)
	}
	for _, e := range pending {
		next.entries[e.kind] = e
		next.names[string(e.kind)] = e.kind
	}
	registry.Store(next)
	pending = nil
	unpublished.Store(false)
}

func lookup(kind Kind) *entry {
	t := table()
	if t == nil {
		return nil
	}
	return t.entries[kind]
}

// internKind returns b as a Kind, without allocating if it is registered.
func internKind(b []byte) (k Kind, registered bool) {
	if t := table(); t != nil {
		if k, ok := t.names[string(b)]; ok {
			return k, true
		}
	}
	return Kind(b), false
}

// Register makes T the payload type of kind. Registering the same type again
// does nothing. Register panics if kind is not a valid kind, if kind already
// has a different type, or if T could encode non-deterministically (a map,
// an interface, a channel or a func anywhere in it), because a payload's
// bytes are hashed. Call it from an init function. (This package's own
// kinds are noted at init and checked the same way at the first read of
// the registry: register.)
func Register[T any](kind Kind) {
	registerMu.Lock()
	defer registerMu.Unlock()
	checkBuiltin()
	add(kind, reflect.TypeFor[T](), newEntry[T])
}

// add checks the registration of t as kind's payload type, panicking as
// Register documents, and adds its entry to pending. registerMu is held.
func add(kind Kind, t reflect.Type, newEntry func(Kind) *entry) {
	if err := kind.Validate(); err != nil {
		panic(fmt.Sprintf("facts.Register: %v", err))
	}
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		panic(fmt.Sprintf("facts.Register(%q): payload type %s must not be a pointer or an interface", kind, t))
	}
	if typ, ok := registered[kind]; ok {
		if typ == t {
			return
		}
		panic(fmt.Sprintf("facts.Register(%q): kind already has payload type %s, not %s", kind, typ, t))
	}
	seen := map[reflect.Type]bool{}
	if err := deterministic(t, seen); err != nil {
		panic(fmt.Sprintf("facts.Register(%q): payload type %s: %v", kind, t, err))
	}
	maps.Copy(checked, seen)
	registered[kind] = t
	pending = append(pending, newEntry(kind))
	unpublished.Store(true)
}

// Registered returns the payload type of kind, if it is registered.
func Registered(kind Kind) (reflect.Type, bool) {
	if e := lookup(kind); e != nil {
		return e.typ, true
	}
	return nil, false
}

// Kinds returns every registered kind, sorted.
func Kinds() []Kind {
	t := table()
	if t == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(t.entries))
}

// deterministic reports an error if t, or a type reachable from its exported
// fields, elements or pointers, could encode in more than one way.
// Types found sound before (checked) are not walked again; registerMu
// is held.
func deterministic(t reflect.Type, seen map[reflect.Type]bool) error {
	if seen[t] || checked[t] {
		return nil
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Map:
		return fmt.Errorf("%s is a map; map order would change the payload's bytes", t)
	case reflect.Interface:
		return fmt.Errorf("%s is an interface; its encoding depends on what it holds", t)
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128, reflect.Uintptr:
		return fmt.Errorf("%s cannot be a payload", t)
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return deterministic(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Tag.Get("msgpack") == "-" {
				continue
			}
			if err := deterministic(f.Type, seen); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	}
	return nil
}

// validator is implemented by payload types with rules beyond their Go
// types, such as a required id.
type validator interface {
	Validate() error
}

func validate[T any](v *T) error {
	if val, ok := any(v).(validator); ok {
		if err := val.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrPayload, err)
		}
	}
	return nil
}

func newEntry[T any](kind Kind) *entry {
	t := reflect.TypeFor[T]()
	isStruct := t.Kind() == reflect.Struct
	return &entry{
		kind: kind,
		typ:  t,
		check: func(data []byte) error {
			if len(data) == 0 {
				return fmt.Errorf("%w: empty payload, want %s", ErrPayload, t)
			}
			if isStruct && !isMapCode(data[0]) {
				return fmt.Errorf("%w: payload is not a msgpack map, want %s", ErrPayload, t)
			}
			v := new(T)
			if err := unmarshalPayload(data, v, true); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrPayload, t, err)
			}
			return validate(v)
		},
		encode: func(payload any) ([]byte, error) {
			var v *T
			switch p := payload.(type) {
			case T:
				v = &p
			case *T:
				if p == nil {
					return nil, fmt.Errorf("%w: nil *%s", ErrPayload, t)
				}
				v = p
			default:
				return nil, fmt.Errorf("%w: payload is %T, want %s", ErrPayload, payload, t)
			}
			if err := validate(v); err != nil {
				return nil, err
			}
			return marshalPayload(v)
		},
		toJSON: func(data []byte) ([]byte, error) {
			v := new(T)
			if err := unmarshalPayload(data, v, false); err != nil {
				return nil, err
			}
			return marshalJSON(v)
		},
		fromJSON: func(raw []byte) ([]byte, error) {
			if isStruct && firstByte(raw) != '{' {
				return nil, fmt.Errorf("%w: want a JSON object for %s", ErrPayload, t)
			}
			v := new(T)
			if err := unmarshalJSONStrict(raw, v); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrPayload, t, err)
			}
			if err := validate(v); err != nil {
				return nil, err
			}
			return marshalPayload(v)
		},
	}
}
