package seal

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The files of a person's seal directory (see Dir).
const (
	// KeyFile holds the private key: PKCS #8, PEM, mode 0600.
	KeyFile = "key.pem"
	// WitnessFile is the person's witness log: JSON Lines, one Entry a
	// line, appended to only.
	WitnessFile = "witness.jsonl"
)

// Key is a person's signing key.
type Key struct {
	priv ed25519.PrivateKey
}

// PublicKey is the public half of a Key. Its text form is "ed25519:"
// and the 32 bytes in standard base64.
type PublicKey string

const publicPrefix = "ed25519:"

// Public returns the key's public half.
func (k Key) Public() PublicKey {
	return publicOf(k.priv.Public().(ed25519.PublicKey))
}

func publicOf(p ed25519.PublicKey) PublicKey {
	return PublicKey(publicPrefix + base64.StdEncoding.EncodeToString(p))
}

// Sign signs msg.
func (k Key) Sign(msg []byte) []byte { return ed25519.Sign(k.priv, msg) }

// ParsePublicKey reads a public key in its text form (see PublicKey).
func ParsePublicKey(s string) (PublicKey, error) {
	s = strings.TrimSpace(s)
	b64, ok := strings.CutPrefix(s, publicPrefix)
	if !ok {
		return "", fmt.Errorf("%w: %q does not start with %q", ErrBadKey, s, publicPrefix)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return "", fmt.Errorf("%w: %q is not %d bytes of base64", ErrBadKey, s, ed25519.PublicKeySize)
	}
	return publicOf(b), nil
}

// Verify reports whether sig is the key's signature of msg. A key that is
// not well formed verifies nothing.
func (p PublicKey) Verify(msg, sig []byte) bool {
	b64, ok := strings.CutPrefix(string(p), publicPrefix)
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.Verify(b, msg, sig)
}

// LoadKey reads the key at path. A key file that others may read, or
// that is not a regular file of its own (a symlink), is ErrKeyExposed.
func LoadKey(path string) (Key, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Key{}, fmt.Errorf("key %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return Key{}, fmt.Errorf("key %s (mode %s): %w; it must be a regular file of mode 0600", path, fi.Mode(), ErrKeyExposed)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("key %s: %w", path, err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return Key{}, fmt.Errorf("key %s: %w: no PEM private key in it", path, ErrBadKey)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return Key{}, fmt.Errorf("key %s: %w: %v", path, ErrBadKey, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return Key{}, fmt.Errorf("key %s: %w: a %T", path, ErrBadKey, k)
	}
	return Key{priv: priv}, nil
}

// OpenKey reads the key at path, making it first if there is none (its
// directory too, mode 0700). Two processes making it at once make one:
// the file appears whole, or not at all.
func OpenKey(path string) (k Key, made bool, err error) {
	k, err = LoadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, false, fmt.Errorf("make key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return Key{}, false, fmt.Errorf("make key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Key{}, false, fmt.Errorf("make key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".key-*")
	if err != nil {
		return Key{}, false, fmt.Errorf("make key: %w", err)
	}
	defer os.Remove(tmp.Name()) // linked into place, or abandoned
	// CreateTemp makes the file 0600 already; say so for whoever reads.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return Key{}, false, fmt.Errorf("make key: %w", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return Key{}, false, fmt.Errorf("make key %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return Key{}, false, fmt.Errorf("make key %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return Key{}, false, fmt.Errorf("make key %s: %w", path, err)
	}
	// A link never replaces a file: a key made meanwhile by another
	// process wins, and is the one read.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			k, err := LoadKey(path)
			return k, false, err
		}
		return Key{}, false, fmt.Errorf("make key %s: %w", path, err)
	}
	return Key{priv: priv}, true, nil
}

// maxKeysFile bounds a file of public keys: a key is one short line.
const maxKeysFile = 1 << 20

// ReadKeys reads the public keys arg names: arg itself when it is one
// (ed25519:…), else the file at arg, a key a line (# starts a comment,
// blank lines are skipped; at most 1 MiB). An error names the file and
// the line.
func ReadKeys(arg string) ([]PublicKey, error) {
	if strings.HasPrefix(arg, publicPrefix) {
		pk, err := ParsePublicKey(arg)
		if err != nil {
			return nil, err
		}
		return []PublicKey{pk}, nil
	}
	file, err := os.Open(arg)
	if err != nil {
		return nil, fmt.Errorf("%s: neither a key (ed25519:…) nor a file of keys: %w", arg, err)
	}
	defer file.Close()
	var keys []PublicKey
	sc := bufio.NewScanner(io.LimitReader(file, maxKeysFile))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		pk, err := ParsePublicKey(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", arg, n, err)
		}
		keys = append(keys, pk)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return keys, nil
}
