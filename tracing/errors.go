package tracing

import "errors"

// The errors of package tracing, checked with errors.Is.
var (
	// ErrExport: a collector did not take the spans sent (a status other
	// than 2xx, or one it kept failing with until the export's time ran
	// out), or took only some.
	ErrExport = errors.New("OTLP export failed")

	// ErrSetting: an environment variable Setup reads holds a value it
	// cannot use.
	ErrSetting = errors.New("bad tracing setting")
)
