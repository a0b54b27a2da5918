package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polyloop/assembly/core/abi"
)

// Compiles counts the compilations Cached has done in this process (tests
// prove that processes starting together on a cold cache compile once).
var Compiles atomic.Int64

// Cached returns the module compiled from wasm, through the cache file
// <root>/<dir>/<sha256 of wasm>.cwasm (dir names the engine and its
// version): deserialize it when it is there and its seal verifies (Seal;
// docs/SPEC.md §7.4); otherwise take the cross-process lock <file>.lock (so
// that N processes starting on a cold cache compile once: the others wait,
// then deserialize what the first wrote), compile, write the sealed file
// atomically (temp file + rename) and evict all but the abi.CacheKeep newest. A
// file that fails its check is never deserialized: it is compiled afresh
// and replaced, with one notice line on stderr; so is anything at the
// file's path that is not a regular file (a symbolic link, a named pipe, a
// device), one that another user could have written (untrusted), or one
// larger than abi.CacheFileLimit. An empty root, or a directory that cannot be
// written, compiles in memory; so does a cache directory (root, root/dir)
// that another user could write, with one notice saying why and what to do.
func Cached[M any](root, dir string, wasm []byte, deserialize func([]byte) (M, error), compile func() (M, []byte, error)) (M, error) {
	if root == "" {
		return compileCounted(compile)
	}
	sum := sha256.Sum256(wasm)
	key := hex.EncodeToString(sum[:])
	d := filepath.Join(root, dir)
	path := filepath.Join(d, key+abi.CacheFileSuffix)
	binding := SealBinding(key, dir)
	limit := abi.CacheFileLimit(len(wasm))
	if !trustedDirs(root, d) {
		return compileCounted(compile)
	}
	if m, _, ok := load(path, binding, limit, deserialize); ok {
		return m, nil
	}
	// Checked again once made: another user may have made them meanwhile.
	if err := os.MkdirAll(d, 0o755); err != nil || !trustedDirs(root, d) {
		return compileCounted(compile)
	}
	unlock, err := lockFile(path + abi.CacheLockSuffix)
	if err != nil {
		var bad *unusableFileError
		if errors.As(err, &bad) {
			distrusted(d, fmt.Sprintf("its lock file %s %s", bad.path, bad.problem), "remove "+bad.path)
		}
		return compileCounted(compile)
	}
	defer unlock()
	m, problem, ok := load(path, binding, limit, deserialize) // another process compiled it meanwhile?
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

// load deserializes the cache file path if it is a regular file of at
// most limit bytes that no other user could have written and its seal
// verifies against binding. Otherwise it says why (problem), or nothing if
// there is no file.
func load[M any](path, binding string, limit int64, deserialize func([]byte) (M, error)) (m M, problem string, ok bool) {
	f, problem := openCacheFile(path)
	if f == nil {
		return m, problem, false
	}
	b, problem := readCacheFile(f, limit)
	if problem != "" {
		return m, problem, false // never read, or never handed to the engine
	}
	payload, problem := Unseal(binding, b)
	if problem != "" {
		return m, problem, false // never handed to the engine
	}
	m, err := deserialize(payload)
	if err != nil { // a build of the engine that names itself the same
		return m, fmt.Sprintf("passed its check but the engine could not load it (%v)", err), false
	}
	now := time.Now()
	os.Chtimes(path, now, now) // recently used: kept by eviction
	return m, "", true
}

// readCacheFile reads the opened cache file f, and closes it, if it is a
// regular file (fileProblem) of at most limit bytes.
func readCacheFile(f *os.File, limit int64) ([]byte, string) {
	defer f.Close()
	fi, problem := fileProblem(f)
	if problem != "" {
		return nil, problem
	}
	if fi.Size() > limit {
		return nil, fmt.Sprintf("is larger than a compiled module of this module can be (%d bytes, at most %d)", fi.Size(), limit)
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Sprintf("could not be read (%v)", err)
	}
	return b, ""
}

// fileProblem says why the opened cache file f must not be used: it is not
// a regular file, or another user could have written it (untrusted).
func fileProblem(f *os.File) (fs.FileInfo, string) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Sprintf("could not be examined (%v)", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "is " + fileKind(fi.Mode()) + ", not a regular file"
	}
	if problem, _ := untrusted(fi); problem != "" {
		return nil, "is " + problem
	}
	return fi, ""
}

// fileKind names what a file that is not regular is.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeDir != 0:
		return "a directory"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// symlinkProblem is the phrase for a symbolic link where the cache keeps a
// file: the cache never makes one, so where it points is not looked at.
const symlinkProblem = "is a symbolic link, not a file this cache wrote"

func isSymlink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// unusableFileError is a cache file (the lock) that is not a regular file.
type unusableFileError struct{ path, problem string }

func (e *unusableFileError) Error() string { return e.path + " " + e.problem }

// trustedDirs reports whether the cache directories dirs may be used:
// each that exists is owned by you (or root) and writable by no other user
// (untrusted). Otherwise it prints the notice (distrusted) and the caller
// compiles in memory, neither reading from nor writing to the cache. The
// directories above the cache root are not checked (a root in /tmp, which
// everyone may write but with the sticky bit, is safe as long as the root
// itself is yours): a symbolic link as the root is followed.
func trustedDirs(dirs ...string) bool {
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			continue // not made yet, or not usable: the callers fall back
		}
		if problem, fix := untrusted(fi); problem != "" {
			distrusted(dir, "it is "+problem+", so another user could plant code in it", fix)
			return false
		}
	}
	return true
}

// noticed holds the distrust notices this process printed: each is printed
// once, however many engines open the cache.
var noticed sync.Map

// distrusted prints the one notice line for a cache directory not used.
// Python prints the same words (bindings/python _module_cache.py).
func distrusted(dir, problem, fix string) {
	line := fmt.Sprintf("polyloop-assembly: not using the module cache %s: %s; compiling the module in memory. "+
		"To use the cache, %s, or set POLYLOOP_ASSEMBLY_CACHE_DIR to a directory of your own\n", dir, problem, fix)
	if _, seen := noticed.LoadOrStore(line, true); !seen {
		fmt.Fprint(os.Stderr, line)
	}
}

// sealMagic opens the trailer Seal appends to a serialized module.
const sealMagic = abi.CacheSealMagic

// SealSize is the length of that trailer: sealMagic, then a SHA-256.
const SealSize = len(sealMagic) + sha256.Size

// SealBinding is what a cache file's digest is bound to besides its bytes
// (abi.CacheSealBindingFormat): the sha256 (hex) of the module it was
// compiled from and the engine with its version (the cache directory's
// name, "wasmtime-<version>").
func SealBinding(moduleSHA256, engine string) string {
	return fmt.Sprintf(abi.CacheSealBindingFormat, moduleSHA256, engine)
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

// evict removes all but the abi.CacheKeep newest .cwasm files of dir (never
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
		if !strings.HasSuffix(e.Name(), abi.CacheFileSuffix) {
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
		if n < abi.CacheKeep {
			n++
			continue
		}
		os.Remove(f.path)
		os.Remove(f.path + abi.CacheLockSuffix)
	}
}
