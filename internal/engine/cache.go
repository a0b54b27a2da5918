package engine

import (
	"crypto/sha256"
	"encoding/hex"
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
// <root>/<dir>/<sha256 of wasm>.cwasm: deserialize it when it is there and
// usable; otherwise take the cross-process lock <file>.lock (so that N
// processes starting on a cold cache compile once: the others wait, then
// deserialize what the first wrote), compile, write the file atomically
// (temp file + rename) and evict all but the CacheKeep newest. An empty
// root, or a directory that cannot be written, compiles in memory.
func Cached[M any](root, dir string, wasm []byte, deserialize func([]byte) (M, error), compile func() (M, []byte, error)) (M, error) {
	if root == "" {
		return compileCounted(compile)
	}
	sum := sha256.Sum256(wasm)
	d := filepath.Join(root, dir)
	path := filepath.Join(d, hex.EncodeToString(sum[:])+".cwasm")
	if m, ok := load(path, deserialize); ok {
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
	if m, ok := load(path, deserialize); ok { // another process compiled it meanwhile
		return m, nil
	}
	m, serialized, err := compile()
	Compiles.Add(1)
	if err != nil {
		return m, err
	}
	if serialized != nil && writeAtomic(path, serialized) == nil {
		evict(d, path)
	}
	return m, nil
}

func compileCounted[M any](compile func() (M, []byte, error)) (M, error) {
	m, _, err := compile()
	Compiles.Add(1)
	return m, err
}

func load[M any](path string, deserialize func([]byte) (M, error)) (M, bool) {
	var zero M
	b, err := os.ReadFile(path)
	if err != nil {
		return zero, false
	}
	m, err := deserialize(b)
	if err != nil {
		return zero, false // corrupt or from another engine build: compile again
	}
	now := time.Now()
	os.Chtimes(path, now, now) // recently used: kept by eviction
	return m, true
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
