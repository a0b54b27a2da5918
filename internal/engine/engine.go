// Package engine is the plumbing under wasmhost: the interface an engine
// (wazero, wasmtime) implements, the pool of instances, the module's
// location, the compile cache's directories and lock, and the classification
// of a failed call. Users call wasmhost (New, Runner, Options, Prompt) and
// wasmhost/wasmtime (New); nothing here is part of the public API.
package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/polyloop/assembly/core"
)

// Export is one of the module's calls: the op argument of its call export
// (wasm/README.md, "ABI"), numbered once in core.Call.
type Export = core.Call

// The calls, as the hosts name them (core.Call's constants).
const (
	Assemble         = core.CallAssemble         // a msgpack request
	AssembleJSON     = core.CallAssembleJSON     // a request as JSON text
	AddStep          = core.CallAddStep          // a msgpack add_step request
	AssembleView     = core.CallAssembleView     // a msgpack request, answered with its view
	AssembleViewJSON = core.CallAssembleViewJSON // the same for JSON text
	PromptStart      = core.CallPromptStart      // a msgpack request, answered with the start of a prompt
	Compare          = core.CallCompare          // a msgpack compare request, answered with JSON text
)

// Exports lists every export a module must have (wasm/README.md, "ABI").
var Exports = []string{"_initialize", "memory", "buffer", "call"}

// Instance is one instantiated module, used by one call at a time. A
// request costs one call of its call export (wasm/README.md, "ABI"); Buffer
// is called once per instance and again only for a request longer than the
// capacity it returned.
type Instance interface {
	// Buffer calls buffer(size): the module's request buffer then holds at
	// least size bytes at ptr (capacity of them).
	Buffer(size uint32) (ptr, capacity uint32, err error)
	// Call calls call(op, size) over the first size bytes of the request
	// buffer and returns its answer's place, ptr<<32|len.
	Call(op Export, size uint32) (uint64, error)
	// Write copies b into linear memory at ptr; Read returns a view of
	// linear memory, valid until the next call into the instance.
	Write(ptr uint32, b []byte) error
	Read(ptr, size uint32) ([]byte, error)
	// MemorySize is the current size of linear memory in bytes.
	MemorySize() uint64
	// Stderr is what the module wrote to its stderr (the Go runtime's fatal
	// errors), at most StderrKeep bytes.
	Stderr() string
	Close()
}

// Engine instantiates a compiled module.
type Engine interface {
	Name() string
	NewInstance() (Instance, error)
	Close() error
}

// Config is wasmhost.Options as the engines need it (see there for the
// meaning of each field); WithDefaults fills the defaults.
type Config struct {
	Module            []byte
	ModulePath        string
	CacheDir          string
	MaxInstances      int
	MemoryLimitBytes  uint64
	RecycleAboveBytes uint64
}

// The pool defaults, the same on every host (the Python and JavaScript
// bindings get them from internal/cmd/genconsts). MaxInstances defaults to
// the number of CPUs.
const (
	// DefaultRecycleAboveBytes: an instance whose linear memory grew past
	// this is discarded after its call (linear memory never shrinks).
	DefaultRecycleAboveBytes = 256 << 20
	// DefaultMemoryLimitBytes caps one instance's linear memory: the whole
	// 32-bit address space of the module, the default and the most.
	DefaultMemoryLimitBytes = 4 << 30
)

// MaxModuleBufferBytes is the largest buffer the module's 32-bit ABI can be
// handed (wasm/README.md): 2^32 − 1 bytes.
const MaxModuleBufferBytes = 1<<32 - 1

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxInstances <= 0 {
		c.MaxInstances = runtime.NumCPU()
	}
	if c.MemoryLimitBytes == 0 || c.MemoryLimitBytes > DefaultMemoryLimitBytes {
		c.MemoryLimitBytes = DefaultMemoryLimitBytes
	}
	if c.RecycleAboveBytes == 0 {
		c.RecycleAboveBytes = DefaultRecycleAboveBytes
	}
	return c
}

// Host is set by package wasmhost (in its init): it opens an engine with the
// given wasmhost.Options and wraps it in a *wasmhost.Runner. The wasmtime
// package calls it, so that the Runner stays wasmhost's type while the
// wasmtime engine lives in the only package that needs cgo.
var Host func(opts any, open func(Config) (Engine, error)) (any, error)

// ErrNoModule is returned when no module was given and none was found.
var ErrNoModule = errors.New("the module wasm/assembly.wasm was not found")

// LoadModule returns c.Module, or reads the module file: c.ModulePath, else
// $POLYLOOP_ASSEMBLY_WASM, else wasm/assembly.wasm found from the working
// directory upwards. A missing module is ErrNoModule (wrapped).
func LoadModule(c Config) ([]byte, error) {
	if c.Module != nil {
		return c.Module, nil
	}
	path := c.ModulePath
	if path == "" {
		path = os.Getenv("POLYLOOP_ASSEMBLY_WASM")
	}
	if path == "" {
		path = findUp(filepath.Join("wasm", "assembly.wasm"))
	}
	if path == "" {
		return nil, fmt.Errorf("%w: run 'make wasm' in the repository, or give its path ($POLYLOOP_ASSEMBLY_WASM)", ErrNoModule)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s (build it with 'make wasm')", ErrNoModule, path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the module: %w", err)
	}
	return b, nil
}

func findUp(rel string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// CacheRoot returns the compile cache's directory: dir, else
// $POLYLOOP_ASSEMBLY_CACHE_DIR, else the user cache directory
// (os.UserCacheDir)/polyloop-assembly; "" when dir or the variable is "-"
// (no disk cache). The layout below it is the same for Go and Python:
//
//	<root>/wazero/                                 wazero's own cache (Go only)
//	<root>/wasmtime-<version>/<sha256>.cwasm       a serialized wasmtime module
//	<root>/wasmtime-<version>/<sha256>.cwasm.lock  the cross-process compile lock
func CacheRoot(dir string) string {
	if dir == "" {
		dir = os.Getenv("POLYLOOP_ASSEMBLY_CACHE_DIR")
	}
	if dir == "-" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "polyloop-assembly")
	}
	return dir
}
