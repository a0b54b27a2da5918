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

	"github.com/polyloop/assembly/core/abi"
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
	Call(op abi.Call, size uint32) (uint64, error)
	// Write copies b into linear memory at ptr; Read returns a view of
	// linear memory, valid until the next call into the instance.
	Write(ptr uint32, b []byte) error
	Read(ptr, size uint32) ([]byte, error)
	// MemorySize is the current size of linear memory in bytes.
	MemorySize() uint64
	// Stderr is what the module wrote to its stderr (the Go runtime's fatal
	// errors), at most abi.StderrKeep bytes.
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

// WithDefaults returns c with every zero field set to its default: the
// number of CPUs, and the contract's abi.DefaultMemoryLimitBytes and
// abi.DefaultRecycleAboveBytes (the same on every host).
func (c Config) WithDefaults() Config {
	if c.MaxInstances <= 0 {
		c.MaxInstances = runtime.NumCPU()
	}
	if c.MemoryLimitBytes == 0 || c.MemoryLimitBytes > abi.DefaultMemoryLimitBytes {
		c.MemoryLimitBytes = abi.DefaultMemoryLimitBytes
	}
	if c.RecycleAboveBytes == 0 {
		c.RecycleAboveBytes = abi.DefaultRecycleAboveBytes
	}
	return c
}

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
// (no disk cache). The layout below it is the same for Go and Python
// (abi.CacheDirEnv and the others, core/abi/module_cache.go).
func CacheRoot(dir string) string {
	if dir == "" {
		dir = os.Getenv(abi.CacheDirEnv)
	}
	if dir == abi.CacheDisabled {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, abi.CacheDirName)
	}
	return dir
}
