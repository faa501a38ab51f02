package action

// The root kept open: with the change feed on, an observation that looks
// at a few paths makes a few dozen calls, and opening, describing and
// closing the root were three of them each time. A Workspace with a
// running feed keeps the root's descriptor between observations. Each
// observation describes the root's path once (links followed, as opening
// it follows them): the feed cannot see the path come to name another
// directory (see rootMoved), and the same record says whether the
// descriptor kept is still the root's. An open descriptor holds its
// directory's inode, so its number cannot be reused while it is kept: the
// same device and inode are the same directory. Anything else at the
// path, or a path that cannot be described, opens the root again.

// keptRoot is the root's descriptor kept between observations, and its
// identity.
type keptRoot struct {
	d  dirFD
	st sysStat // as the descriptor was opened
	ok bool
}

// openRoot opens the root for a walk, or takes the one kept when at is
// the stat record of the root's path and describes it: the directory and
// its stat record. kept: the descriptor is the Workspace's, not to be
// closed by the walk. It keeps the descriptor it opens when the feed
// runs. Called with w.mu held.
func (w *Workspace) openRoot(at *sysStat) (d dirFD, st sysStat, kept bool, err error) {
	if k := w.box.root(); k.ok {
		if at != nil && at.mode.IsDir() && sameFile(*at, k.st) {
			return k.d, *at, true, nil
		}
		w.box.dropRoot()
	}
	d, err = openRootDir(w.root)
	if err != nil {
		return d, st, false, err
	}
	st, err = d.stat()
	if err != nil {
		d.close()
		return d, st, false, err
	}
	if w.feed != nil && w.box != nil {
		w.box.keepRoot(keptRoot{d: d, st: st, ok: true})
		return d, st, true, nil
	}
	return d, st, false, nil
}

// rootMoved reports whether the root's path names another directory
// than the last reading's root, or nothing; else it returns the path's
// stat record. The feed watches the directories it was given, wherever
// they go: a directory above the root moved away, and another tree made
// at the root's path, raises no event in any of them. Called with w.mu
// held, with a last reading.
func (w *Workspace) rootMoved() (sysStat, bool) {
	st, err := statPath(w.root)
	if err != nil || !st.mode.IsDir() || st.key.ino != w.tree.key.ino || st.key.dev != w.tree.key.dev {
		return st, true
	}
	return st, false
}

// root returns the root kept, if any.
func (b *feedBox) root() keptRoot {
	if b == nil {
		return keptRoot{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.kept
}

// keepRoot keeps k, closing the root kept before.
func (b *feedBox) keepRoot(k keptRoot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.kept.ok {
		b.kept.d.close()
	}
	b.kept = k
}

// dropRoot closes the root kept, if any.
func (b *feedBox) dropRoot() {
	if b == nil {
		return
	}
	b.keepRoot(keptRoot{})
}
