// Package wasmhost runs the assembly core's WebAssembly module
// (wasm/assembly.wasm, built by `make wasm`) in a sandbox, with the same API as
// the native core: AssembleBytes, Assemble, ValidateTemplate and NewPrompt.
//
// New runs it under wazero (pure Go: this package builds with CGO_ENABLED=0).
// The wasmtime engine lives in the subpackage wasmhost/wasmtime, the only
// package that imports wasmtime-go (cgo); both share this package's Runner.
//
// A Runner is safe for concurrent use: it keeps a pool of instances, each of
// which serves one call at a time. An instance whose linear memory grew past
// Options.RecycleAbove is dropped after its call (linear memory never
// shrinks); an instance that trapped or exited is discarded and the call
// answers an internal error; the next call gets a fresh instance.
//
// The module gets no preopened directory, environment or arguments, and its
// stdout and stderr go nowhere; it gets the system clocks, which the Go
// runtime inside it needs for its scheduler and garbage collector.
package wasmhost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/polyloop/assembly/core"
)

// Options configures a Runner. The zero value is usable.
type Options struct {
	// Module is the module's bytes. When nil, ModulePath is read.
	Module []byte
	// ModulePath is where the module is read from when Module is nil.
	// Default: $POLYLOOP_ASSEMBLY_WASM, else wasm/assembly.wasm found from
	// the working directory upwards.
	ModulePath string
	// CacheDir is where compiled code is cached, keyed by the module's hash.
	// Default: $POLYLOOP_ASSEMBLY_CACHE_DIR, else the user cache directory
	// (os.UserCacheDir)/polyloop-assembly. "-" disables the disk cache. An
	// unusable cache falls back to compiling in memory.
	CacheDir string
	// PoolSize is the number of idle instances kept. Default GOMAXPROCS.
	PoolSize int
	// MaxMemoryBytes caps each instance's linear memory (a request that needs
	// more fails with an internal error). Default 4 GiB, the wasm32 maximum.
	MaxMemoryBytes uint64
	// RecycleAbove drops an instance after a call that left its linear memory
	// larger than this. Default 256 MiB.
	RecycleAbove uint64
}

// Instance is one instantiated module, used by one call at a time. Engines
// implement it.
type Instance interface {
	// Alloc, Assemble and Free call the module's exports of the same names.
	Alloc(size uint32) (uint32, error)
	Assemble(ptr, size uint32) (uint64, error)
	Free(ptr uint32) error
	// Write copies b into linear memory at ptr; Read returns a view of
	// linear memory, valid until the next call into the instance.
	Write(ptr uint32, b []byte) error
	Read(ptr, size uint32) ([]byte, error)
	// MemorySize is the current size of linear memory in bytes.
	MemorySize() uint64
	Close()
}

// Engine instantiates a compiled module. Engines implement it.
type Engine interface {
	Name() string
	NewInstance() (Instance, error)
	Close() error
}

// Runner runs the module on a pool of instances.
type Runner struct {
	engine       Engine
	idle         chan Instance
	recycleAbove uint64
	closeOnce    sync.Once
	peakMemory   atomic.Uint64
}

// NewRunner wraps an engine in a pooled runner. Engines' constructors call it.
func NewRunner(e Engine, opts Options) *Runner {
	opts = opts.withDefaults()
	return &Runner{engine: e, idle: make(chan Instance, opts.PoolSize), recycleAbove: opts.RecycleAbove}
}

func (o Options) withDefaults() Options {
	if o.PoolSize <= 0 {
		o.PoolSize = runtime.GOMAXPROCS(0)
	}
	if o.MaxMemoryBytes == 0 || o.MaxMemoryBytes > 4<<30 {
		o.MaxMemoryBytes = 4 << 30
	}
	if o.RecycleAbove == 0 {
		o.RecycleAbove = 256 << 20
	}
	return o
}

// Engine names the engine: "wazero" or "wasmtime".
func (r *Runner) Engine() string { return r.engine.Name() }

// AssembleBytes is core.AssembleBytes run inside the module. It always
// returns a response; a failure of the sandbox (a trap, memory exhausted) is
// an error response with code internal.
func (r *Runner) AssembleBytes(request []byte) []byte {
	if len(request) > core.MaxRequestBytes {
		// The module would answer too_large itself; answering here spares
		// copying a gigabyte into it.
		return core.AssembleBytes(request)
	}
	resp, err := r.call(request)
	if err != nil {
		return core.InternalErrorResponse(err.Error())
	}
	return resp
}

func (r *Runner) call(request []byte) (resp []byte, err error) {
	inst, err := r.get()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot instantiate the module: %v", r.engine.Name(), err)
	}
	keep := false
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: the host panicked while calling the module: %v", r.engine.Name(), p)
			keep = false
		}
		r.put(inst, keep)
	}()
	fail := func(stage string, e error) ([]byte, error) {
		return nil, fmt.Errorf("%s: the module failed during %s (%s); the instance was discarded and the next call gets a fresh one; if the request is large, raise Options.MaxMemoryBytes or split it", r.engine.Name(), stage, firstLine(e))
	}
	ptr, e := inst.Alloc(uint32(len(request)))
	if e != nil {
		return fail("alloc", e)
	}
	if e := inst.Write(ptr, request); e != nil {
		return fail("write", e)
	}
	packed, e := inst.Assemble(ptr, uint32(len(request)))
	if e != nil {
		return fail("assemble", e)
	}
	rptr, rlen := uint32(packed>>32), uint32(packed)
	view, e := inst.Read(rptr, rlen)
	if e != nil {
		return fail("read", e)
	}
	resp = append([]byte(nil), view...)
	if e := inst.Free(rptr); e != nil {
		return fail("free", e)
	}
	mem := inst.MemorySize()
	for {
		old := r.peakMemory.Load()
		if mem <= old || r.peakMemory.CompareAndSwap(old, mem) {
			break
		}
	}
	keep = mem <= r.recycleAbove
	return resp, nil
}

// firstLine keeps an engine's error to its first line (traps carry a
// backtrace) and names the trap.
func firstLine(e error) string {
	s := e.Error()
	var trap string
	if i := strings.Index(s, "wasm trap: "); i >= 0 {
		trap = s[i:]
		if j := strings.IndexByte(trap, '\n'); j >= 0 {
			trap = trap[:j]
		}
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if trap != "" && !strings.Contains(s, trap) {
		s += ": " + trap
	}
	return s
}

func (r *Runner) get() (Instance, error) {
	select {
	case inst := <-r.idle:
		return inst, nil
	default:
		return r.engine.NewInstance()
	}
}

func (r *Runner) put(inst Instance, keep bool) {
	if keep {
		select {
		case r.idle <- inst:
			return
		default:
		}
	}
	inst.Close()
}

// PeakMemoryBytes is the largest linear memory of an instance of this runner
// after a call: the memory one instance needs for the largest request it has
// answered (linear memory never shrinks).
func (r *Runner) PeakMemoryBytes() uint64 { return r.peakMemory.Load() }

// Warm makes sure at least one instance is ready, so that the first call
// does not pay for instantiation.
func (r *Runner) Warm() error {
	inst, err := r.get()
	if err != nil {
		return err
	}
	r.put(inst, true)
	return nil
}

// Instantiate creates one instance and closes it again: a health check of
// the module and the engine, and what benchmarks time as instantiation.
func (r *Runner) Instantiate() error {
	inst, err := r.engine.NewInstance()
	if err != nil {
		return err
	}
	inst.Close()
	return nil
}

// Close releases every idle instance and the engine. Calls must not be in
// flight.
func (r *Runner) Close() error {
	var err error
	r.closeOnce.Do(func() {
		for {
			select {
			case inst := <-r.idle:
				inst.Close()
				continue
			default:
			}
			break
		}
		err = r.engine.Close()
	})
	return err
}

// Assemble is core.Assemble run inside the module.
func (r *Runner) Assemble(req *core.Request) (*core.Response, error) {
	return core.DecodeResponse(r.AssembleBytes(core.EncodeRequest(req)))
}

// ValidateTemplate is core.ValidateTemplate run inside the module: it
// assembles a request holding only the template.
func (r *Runner) ValidateTemplate(t string) error {
	_, err := r.Assemble(&core.Request{ObservationTemplate: t})
	return err
}

// ---- module and cache location ----

// LoadModule returns opts.Module, or reads the module file (see Options).
func LoadModule(opts Options) ([]byte, error) {
	if opts.Module != nil {
		return opts.Module, nil
	}
	path := opts.ModulePath
	if path == "" {
		path = os.Getenv("POLYLOOP_ASSEMBLY_WASM")
	}
	if path == "" {
		path = findUp(filepath.Join("wasm", "assembly.wasm"))
	}
	if path == "" {
		return nil, errors.New("the module wasm/assembly.wasm was not found: run 'make wasm' in the repository, or set Options.ModulePath or $POLYLOOP_ASSEMBLY_WASM")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the module: %w (build it with 'make wasm')", err)
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

// CacheDir returns the directory for compiled code of the named engine, or
// "" when caching is disabled.
func CacheDir(opts Options, engine string) string {
	dir := opts.CacheDir
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
	return filepath.Join(dir, engine)
}
