// Package wasmtime runs the assembly core's WebAssembly module under
// wasmtime-go. It is the only package of this module that uses cgo; the
// Runner, its pool, the call protocol and the typed API are wasmhost's. A
// request costs one cgo call: the module's call export through the C API's
// wasmtime_func_call_unchecked (unchecked.go), its memory read as that call
// left it.
//
// The compiled module is cached on disk in wasmtime's serialized form, at
// <cache dir>/wasmtime-<Version>/<module sha256>.cwasm (the layout the Python
// binding writes too; see wasmhost.Options.CacheDir): compiled once under a
// file lock when processes start together on a cold cache, the 4 newest
// kept. Each file carries a SHA-256 of its bytes bound to the module and to
// this Version, checked before wasmtime sees a byte of it: an entry that
// fails the check (or does not deserialize) is never run but compiled
// afresh and replaced, with one notice line on stderr; so is anything at
// that path that is not a regular file, or is too large to be one (a named
// pipe, a link to /dev/zero). A cache directory another user owns or may
// write is not used at all (the seal is unkeyed; docs/SPEC.md §7.4).
package wasmtime

import (
	"errors"
	"fmt"
	"io"
	"os"

	wt "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/wasmhost"
)

// Version is the wasmtime-go version this package links (it names the
// cache directory: a serialized module is only valid for the wasmtime that
// wrote it).
const Version = "39.0.1"

// New returns a Runner of the module under wasmtime.
func New(opts wasmhost.Options) (*wasmhost.Runner, error) {
	return wasmhost.NewWithEngine(opts, open)
}

type wtEngine struct {
	engine   *wt.Engine
	module   *wt.Module
	linker   *wt.Linker
	maxBytes int64
}

func open(c engine.Config) (engine.Engine, error) {
	c = c.WithDefaults()
	if err := checkLayout(); err != nil {
		return nil, err
	}
	wasm, err := engine.LoadModule(c)
	if err != nil {
		return nil, err
	}
	e := wt.NewEngine()
	mod, err := engine.Cached(engine.CacheRoot(c.CacheDir), "wasmtime-"+Version, wasm,
		func(b []byte) (*wt.Module, error) { return wt.NewModuleDeserialize(e, b) },
		func() (*wt.Module, []byte, error) {
			m, err := wt.NewModule(e, wasm)
			if err != nil {
				return nil, nil, fmt.Errorf("wasmtime: compiling the module: %w", err)
			}
			b, _ := m.Serialize() // a module that cannot be serialized is not cached
			return m, b, nil
		})
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, x := range mod.Exports() {
		have[x.Name()] = true
	}
	for _, name := range engine.Exports {
		if !have[name] {
			return nil, fmt.Errorf("wasmtime: the module does not export %q; rebuild it with 'make wasm' (a module from another release?)", name)
		}
	}
	linker := wt.NewLinker(e)
	if err := linker.DefineWasi(); err != nil {
		return nil, fmt.Errorf("wasmtime: WASI: %w", err)
	}
	return &wtEngine{engine: e, module: mod, linker: linker, maxBytes: int64(c.MemoryLimitBytes)}, nil
}

func (e *wtEngine) Name() string { return "wasmtime" }

func (e *wtEngine) NewInstance() (engine.Instance, error) {
	store := wt.NewStore(e.engine)
	store.Limiter(e.maxBytes, -1, -1, -1, -1)
	wasi := wt.NewWasiConfig() // no args, env, preopens; stdout goes nowhere
	// The module's stderr goes to a temporary file, unlinked once the
	// instance is made: the Go runtime's fatal errors land there for
	// Detail (wasmtime-go has no in-memory stderr). Without a temporary
	// directory, stderr goes nowhere.
	stderr, err := os.CreateTemp("", "polyloop-assembly-stderr-*")
	if err == nil {
		defer os.Remove(stderr.Name())
		if wasi.SetStderrFile(stderr.Name()) != nil {
			stderr.Close()
			stderr = nil
		}
	} else {
		stderr = nil
	}
	store.SetWasi(wasi)
	fail := func(err error) (engine.Instance, error) {
		store.Close()
		if stderr != nil {
			stderr.Close()
		}
		return nil, err
	}
	inst, err := e.linker.Instantiate(store, e.module)
	if err != nil {
		return fail(err)
	}
	if _, err := inst.GetFunc(store, "_initialize").Call(store); err != nil {
		return fail(err)
	}
	mem := inst.GetExport(store, "memory").Memory()
	return &instance{
		store: store, stderr: stderr,
		calls: newCalls(store, inst.GetFunc(store, "buffer"), inst.GetFunc(store, "call"), mem),
	}, nil
}

func (e *wtEngine) Close() error {
	e.linker.Close()
	e.module.Close()
	e.engine.Close()
	return nil
}

// instance is one store and its instance; every call into it is one cgo
// call (unchecked.go), and memory is read as that call left it.
type instance struct {
	store  *wt.Store
	stderr *os.File
	calls  calls
}

func (i *instance) Buffer(size uint32) (ptr, capacity uint32, err error) {
	packed, err := i.calls.invoke(false, size, 0)
	return uint32(packed >> 32), uint32(packed), err
}

func (i *instance) Call(op abi.Call, size uint32) (uint64, error) {
	return i.calls.invoke(true, uint32(op), size)
}

func (i *instance) Write(ptr uint32, b []byte) error {
	mem := i.calls.memory()
	if uint64(ptr)+uint64(len(b)) > uint64(len(mem)) {
		return engine.ErrBounds
	}
	copy(mem[ptr:], b)
	return nil
}

func (i *instance) Read(ptr, size uint32) ([]byte, error) {
	mem := i.calls.memory()
	if uint64(ptr)+uint64(size) > uint64(len(mem)) {
		return nil, engine.ErrBounds
	}
	return mem[ptr : ptr+size], nil
}

func (i *instance) MemorySize() uint64 { return uint64(len(i.calls.memory())) }

func (i *instance) Stderr() string {
	if i.stderr == nil {
		return ""
	}
	b := make([]byte, abi.StderrKeep)
	n, err := i.stderr.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return string(b[:n])
}

func (i *instance) Close() {
	i.store.Close()
	i.calls.free()
	if i.stderr != nil {
		i.stderr.Close()
	}
}
