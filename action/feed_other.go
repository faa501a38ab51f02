//go:build !linux

package action

import (
	"context"
	"errors"
	"sync"
)

// Without inotify there is no change feed: kqueue would need a descriptor
// for every file, and the walk is the reading.

type feed struct{ fd int }

var errNoFeed = errors.New("change feed: not available on this platform")

func startFeed(string, *sync.RWMutex) (*feed, error)          { return nil, errNoFeed }
func (*feed) add(string, dirFD) error                         { return errNoFeed }
func (*feed) sync(context.Context) (map[string]change, error) { return nil, errNoFeed }
func (*feed) close() error                                    { return nil }
func (*feed) isClosed() bool                                  { return true }

const feedSupported = false
