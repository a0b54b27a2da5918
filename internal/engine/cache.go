package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// CacheKeep is how many compiled modules each wasmtime-<version> directory
// keeps (the newest by modification time; a cache hit touches its file).
const CacheKeep = 4

// Compiles counts the compilations Cached has done in this process (tests
// prove that processes starting together on a cold cache compile once).
var Compiles atomic.Int64

// Cached returns the module compiled from wasm, through the cache file
// <root>/<dir>/<sha256 of wasm>.cwasm (dir names the engine and its
// version): deserialize it when it is there and its seal verifies (Seal;
// docs/SPEC.md §7.4); otherwise take the cross-process lock <file>.lock (so
// that N processes starting on a cold cache compile once: the others wait,
// then deserialize what the first wrote), compile, write the sealed file
// atomically (temp file + rename) and evict all but the CacheKeep newest. A
// file that fails its check is never deserialized: it is compiled afresh
// and replaced, with one notice line on stderr. An empty root, or a
// directory that cannot be written, compiles in memory.
func Cached[M any](root, dir string, wasm []byte, deserialize func([]byte) (M, error), compile func() (M, []byte, error)) (M, error) {
	if root == "" {
		return compileCounted(compile)
	}
	sum := sha256.Sum256(wasm)
	key := hex.EncodeToString(sum[:])
	d := filepath.Join(root, dir)
	path := filepath.Join(d, key+".cwasm")
	binding := SealBinding(key, dir)
	if m, _, ok := load(path, binding, deserialize); ok {
		return m, nil
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return compileCounted(compile)
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return compileCounted(compile)
	}
	defer unlock()
	m, problem, ok := load(path, binding, deserialize) // another process compiled it meanwhile?
	if ok {
		return m, nil
	}
	m, serialized, err := compile()
	Compiles.Add(1)
	if err != nil {
		return m, err
	}
	werr := errors.New("the engine could not serialize it")
	if serialized != nil {
		if werr = writeAtomic(path, Seal(binding, serialized)); werr == nil {
			evict(d, path)
		}
	}
	if problem != "" {
		rejected(path, problem, werr)
	}
	return m, nil
}

// rejected prints the one notice line for a cache file that failed its
// check and was compiled afresh; werr is why it could not be replaced.
func rejected(path, problem string, werr error) {
	replaced := "replaced it"
	if werr != nil {
		replaced = fmt.Sprintf("could not replace it (%v), so the next process compiles it again", werr)
	}
	fmt.Fprintf(os.Stderr, "polyloop-assembly: the cached compiled module %s %s: compiled it afresh and %s\n", path, problem, replaced)
}

func compileCounted[M any](compile func() (M, []byte, error)) (M, error) {
	m, _, err := compile()
	Compiles.Add(1)
	return m, err
}

// load deserializes the cache file path if its seal verifies against
// binding. Otherwise it says why (problem), or nothing if there is no file.
func load[M any](path, binding string, deserialize func([]byte) (M, error)) (m M, problem string, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return m, "", false
	}
	payload, problem := Unseal(binding, b)
	if problem != "" {
		return m, problem, false // never handed to the engine
	}
	m, err = deserialize(payload)
	if err != nil { // a build of the engine that names itself the same
		return m, fmt.Sprintf("passed its check but the engine could not load it (%v)", err), false
	}
	now := time.Now()
	os.Chtimes(path, now, now) // recently used: kept by eviction
	return m, "", true
}

// sealMagic opens the trailer Seal appends to a serialized module.
const sealMagic = "polyloop-cwasm-1"

// SealSize is the length of that trailer: sealMagic, then a SHA-256.
const SealSize = len(sealMagic) + sha256.Size

// SealBinding is what a cache file's digest is bound to besides its bytes:
// the sha256 (hex) of the module it was compiled from and the engine with
// its version (the cache directory's name, "wasmtime-<version>").
func SealBinding(moduleSHA256, engine string) string {
	return "polyloop-assembly cwasm v1\n" + moduleSHA256 + "\n" + engine + "\n"
}

// sealDigest is SHA-256(binding || payload).
func sealDigest(binding string, payload []byte) []byte {
	h := sha256.New()
	h.Write([]byte(binding))
	h.Write(payload)
	return h.Sum(nil)
}

// Seal returns payload (an engine's serialized module) followed by the
// trailer sealMagic + SHA-256(binding || payload): the layout of a .cwasm
// file (docs/SPEC.md §7.4).
func Seal(binding string, payload []byte) []byte {
	out := make([]byte, 0, len(payload)+SealSize)
	out = append(out, payload...)
	out = append(out, sealMagic...)
	return append(out, sealDigest(binding, payload)...)
}

// Unseal checks a .cwasm file's trailer against binding and returns the
// serialized module it seals, or a problem (a phrase for a notice) when the
// file is truncated, has no trailer or its digest does not match.
func Unseal(binding string, file []byte) (payload []byte, problem string) {
	n := len(file) - SealSize
	if n < 0 || string(file[n:n+len(sealMagic)]) != sealMagic {
		return nil, "has no integrity digest (truncated, or written by an older release)"
	}
	if !bytes.Equal(file[n+len(sealMagic):], sealDigest(binding, file[:n])) {
		return nil, "failed its integrity check (its sha256 does not match: corrupt, or not compiled from this module by this engine)"
	}
	return file[:n], ""
}

func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr == nil && cerr == nil {
		if werr = os.Rename(f.Name(), path); werr == nil {
			return nil
		}
	}
	os.Remove(f.Name())
	if werr == nil {
		werr = cerr
	}
	return werr
}

// evict removes all but the CacheKeep newest .cwasm files of dir (never
// keep, the one just written) and their lock files.
func evict(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".cwasm") {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, file{filepath.Join(dir, e.Name()), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	n := 1 // keep
	for _, f := range files {
		if f.path == keep {
			continue
		}
		if n < CacheKeep {
			n++
			continue
		}
		os.Remove(f.path)
		os.Remove(f.path + ".lock")
	}
}
