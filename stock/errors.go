package stock

import (
	"errors"
	"fmt"
)

// The errors of package stock, checked with errors.Is. (The trust file's
// are beside it, in trust.go.)
var (
	// ErrAgentName: an agent's name is not 1 to 64 of a-z, 0-9, '-', '_'.
	ErrAgentName = errors.New("bad agent name")

	// ErrAgentFile: an agent file cannot be used: its front matter, its
	// size, or where it leads.
	ErrAgentFile = errors.New("bad agent file")

	// ErrNetworkRule: a network rule spelled other than on, off or
	// allow=HOST[,HOST...] with each host a valid allow-list rule.
	ErrNetworkRule = errors.New("bad network rule")

	// ErrNetworkBoth: a network rule on or off given with an allow-list
	// (NetworkFlags): the rule is one or the other.
	ErrNetworkBoth = errors.New("on or off and allow=HOSTS together: give one rule")

	// ErrNoStore: no store was found and none is to be created.
	ErrNoStore = errors.New("no harness store")

	// ErrReplicas: a replica count for a NATS store that is not 1 to 5.
	ErrReplicas = errors.New("bad replica count")

	// ErrModelSpec: a model spec this program cannot load.
	ErrModelSpec = errors.New("bad model spec")

	// ErrUnknownSetting: a settings file names a key this program does
	// not know (a typo, or a newer program's). The other keys are read.
	ErrUnknownSetting = errors.New("unknown setting")

	// ErrSettingsFile: a settings file that is not a regular file (a
	// device, a pipe: a cloned repository may link one there) or is over
	// MaxSettingsSize.
	ErrSettingsFile = errors.New("not a settings file")

	// ErrBadSettings: the settings a session is opened with — the files
	// and the command line's layer, merged — cannot work: an approval
	// mode or pattern that does not parse, a bound out of range, a
	// sandbox mode unknown. Nothing was opened.
	ErrBadSettings = errors.New("bad settings")

	// ErrNoMCPServer: the settings in force name no MCP server of that
	// name (Place.MCPServer).
	ErrNoMCPServer = errors.New("no MCP server")

	// ErrNoModel: a thread needs a model and neither the command nor the
	// settings name one.
	ErrNoModel = errors.New("no model given")

	// ErrOtherMachine: the thread records a workspace on another host;
	// a session never acts there.
	ErrOtherMachine = errors.New("on another machine")

	// ErrNoWorkspace: the workspace the thread records is not a
	// directory on this machine.
	ErrNoWorkspace = errors.New("which is not a directory here")

	// ErrStoreCameWith: the session's store lies inside its workspace,
	// so it may have come with it (copied, or committed), and a thread
	// of it that records another workspace is not entered: such a store
	// never acts in another directory (see Place.StoreInside).
	ErrStoreCameWith = errors.New("a store that came with a workspace never acts in another")

	// ErrEmptyExport: an export of a thread's log to verify holds no
	// facts.
	ErrEmptyExport = errors.New("holds no facts")

	// ErrSessionClosed: the session's store was closed (Session.Close,
	// Session.Release) and not opened again.
	ErrSessionClosed = errors.New("the session's store is closed")

	// ErrNoStep: a step to show names no seq of the thread, no action
	// of it, or a thread outside its tree. ErrNoAction, which is also
	// ErrNoStep: it names no action (and is no seq).
	ErrNoStep   = errors.New("no such step")
	ErrNoAction = errors.New("no such action")
)

// stepError is a step that names nothing, said as msg; it is ErrNoStep,
// and ErrNoAction when action is set.
type stepError struct {
	msg    string
	action bool
}

func (e *stepError) Error() string { return e.msg }

// Is reports whether target is ErrNoStep, or ErrNoAction for a name that
// is no action.
func (e *stepError) Is(target error) bool {
	return target == ErrNoStep || e.action && target == ErrNoAction
}

// ErrSealKeys: a key to trust a seal of (SealCheckOf) is neither a public
// key nor a readable file of them; ErrWitnessLog: a witness log to read
// seals from is not there. Both keep the message of the error they wrap.
var (
	ErrSealKeys   = errors.New("bad key to trust")
	ErrWitnessLog = errors.New("bad witness log")
)

// argError is err, said as err is, that is also the sentinel is.
type argError struct {
	err error
	is  error
}

func (e argError) Error() string   { return e.err.Error() }
func (e argError) Unwrap() []error { return []error{e.err, e.is} }

// NoModelError is ErrNoModel where a settings file that is not trusted
// names a model, which was left out.
type NoModelError struct {
	// Ignored is the file whose "model" was left out.
	Ignored string
}

func (e *NoModelError) Error() string {
	return fmt.Sprintf("no model given (%s names one, left out until you trust its content: harness trust)", e.Ignored)
}

// Unwrap makes it ErrNoModel.
func (e *NoModelError) Unwrap() error { return ErrNoModel }
