package rerun

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// checkScratch refuses a live rerun whose scratch workspace is none, or
// the workspace itself, or inside it, or holds it.
func checkScratch(source, scratch string) error {
	if source == "" || scratch == "" {
		return fmt.Errorf("%w: a live rerun needs the workspace and a scratch copy of it", ErrLiveRefused)
	}
	src, err := realDir(source)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLiveRefused, err)
	}
	dst, err := realDir(scratch)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLiveRefused, err)
	}
	if within(src, dst) || within(dst, src) {
		return fmt.Errorf("%w: the scratch copy %s and the workspace %s must be apart", ErrLiveRefused, dst, src)
	}
	return nil
}

// realDir is dir absolute, its symlinks followed.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// CopyWorkspace copies the workspace src into the empty directory dst:
// its directories, regular files (with their permission bits) and
// symlinks (as links: never followed), but not the paths skip names (a
// store inside it) nor anything else (devices, sockets, pipes).
func CopyWorkspace(src, dst string, skip []string) error {
	entries, err := os.ReadDir(dst)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("scratch copy: %s is not empty", dst)
	}
	var skipped []string
	for _, s := range skip {
		if abs, err := filepath.Abs(s); err == nil {
			skipped = append(skipped, abs)
		}
	}
	src, err = filepath.Abs(src)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("scratch copy: %w", err)
		}
		for _, s := range skipped {
			if path == s {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("scratch copy: %w", err)
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return fmt.Errorf("scratch copy: %w", err)
			}
			return os.Symlink(link, to)
		case d.Type().IsRegular():
			return copyFile(path, to, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(from, to string, perm fs.FileMode) (err error) {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("scratch copy: %w", err)
	}
	return nil
}
