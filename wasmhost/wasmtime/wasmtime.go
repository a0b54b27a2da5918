// Package wasmtime runs the assembly core's WebAssembly module under
// wasmtime-go. It is the only package of this module that uses cgo; the pool,
// the call protocol and the typed API are wasmhost's.
//
// The compiled module is cached on disk as wasmtime's serialized form, keyed
// by the module's SHA-256 and this package's wasmtime version; a cache entry
// that does not deserialize is replaced by a fresh compile.
package wasmtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	wt "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/polyloop/assembly/wasmhost"
)

// Version is the wasmtime-go major version this package links.
const Version = "39.0.1"

// New returns a Runner of the module under wasmtime.
func New(opts wasmhost.Options) (*wasmhost.Runner, error) {
	e, err := newEngine(opts)
	if err != nil {
		return nil, err
	}
	return wasmhost.NewRunner(e, opts), nil
}

type engine struct {
	engine   *wt.Engine
	module   *wt.Module
	linker   *wt.Linker
	maxBytes int64
}

func newEngine(opts wasmhost.Options) (*engine, error) {
	wasm, err := wasmhost.LoadModule(opts)
	if err != nil {
		return nil, err
	}
	e := wt.NewEngine()
	mod, err := loadModule(e, wasm, wasmhost.CacheDir(opts, "wasmtime"))
	if err != nil {
		return nil, err
	}
	linker := wt.NewLinker(e)
	if err := linker.DefineWasi(); err != nil {
		return nil, fmt.Errorf("wasmtime: WASI: %w", err)
	}
	maxBytes := int64(opts.MaxMemoryBytes)
	if maxBytes <= 0 || maxBytes > 4<<30 {
		maxBytes = 4 << 30
	}
	return &engine{engine: e, module: mod, linker: linker, maxBytes: maxBytes}, nil
}

// loadModule deserializes the cached compiled module, or compiles and caches
// it.
func loadModule(e *wt.Engine, wasm []byte, dir string) (*wt.Module, error) {
	sum := sha256.Sum256(wasm)
	var path string
	if dir != "" {
		path = filepath.Join(dir, "wasmtime-"+Version+"-"+hex.EncodeToString(sum[:])+".cwasm")
		if b, err := os.ReadFile(path); err == nil {
			if m, err := wt.NewModuleDeserialize(e, b); err == nil {
				return m, nil
			}
		}
	}
	m, err := wt.NewModule(e, wasm)
	if err != nil {
		return nil, fmt.Errorf("wasmtime: compiling the module: %w", err)
	}
	if path != "" {
		if b, err := m.Serialize(); err == nil {
			writeAtomic(path, b) // best effort: a cache that cannot be written is no cache
		}
	}
	return m, nil
}

func writeAtomic(path string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}

func (e *engine) Name() string { return "wasmtime" }

func (e *engine) NewInstance() (wasmhost.Instance, error) {
	store := wt.NewStore(e.engine)
	store.Limiter(e.maxBytes, -1, -1, -1, -1)
	wasi := wt.NewWasiConfig() // no args, env, preopens; stdio goes nowhere
	store.SetWasi(wasi)
	inst, err := e.linker.Instantiate(store, e.module)
	if err != nil {
		store.Close()
		return nil, err
	}
	init := inst.GetFunc(store, "_initialize")
	if init == nil {
		store.Close()
		return nil, errors.New("the module does not export _initialize; rebuild it with 'make wasm'")
	}
	if _, err := init.Call(store); err != nil {
		store.Close()
		return nil, err
	}
	memExt := inst.GetExport(store, "memory")
	if memExt == nil || memExt.Memory() == nil {
		store.Close()
		return nil, errors.New("the module does not export its memory")
	}
	return &instance{
		store: store, mem: memExt.Memory(),
		alloc: inst.GetFunc(store, "alloc"), free: inst.GetFunc(store, "free"), assemble: inst.GetFunc(store, "assemble"),
	}, nil
}

func (e *engine) Close() error {
	e.linker.Close()
	e.module.Close()
	e.engine.Close()
	return nil
}

type instance struct {
	store                 *wt.Store
	mem                   *wt.Memory
	alloc, free, assemble *wt.Func
}

var errBounds = errors.New("out of the bounds of linear memory")

func (i *instance) Alloc(size uint32) (uint32, error) {
	v, err := i.alloc.Call(i.store, int32(size))
	if err != nil {
		return 0, err
	}
	return uint32(v.(int32)), nil
}

func (i *instance) Assemble(ptr, size uint32) (uint64, error) {
	v, err := i.assemble.Call(i.store, int32(ptr), int32(size))
	if err != nil {
		return 0, err
	}
	return uint64(v.(int64)), nil
}

func (i *instance) Free(ptr uint32) error {
	_, err := i.free.Call(i.store, int32(ptr))
	return err
}

func (i *instance) Write(ptr uint32, b []byte) error {
	mem := i.mem.UnsafeData(i.store)
	if uint64(ptr)+uint64(len(b)) > uint64(len(mem)) {
		return errBounds
	}
	copy(mem[ptr:], b)
	return nil
}

func (i *instance) Read(ptr, size uint32) ([]byte, error) {
	mem := i.mem.UnsafeData(i.store)
	if uint64(ptr)+uint64(size) > uint64(len(mem)) {
		return nil, errBounds
	}
	return mem[ptr : ptr+size], nil
}

func (i *instance) MemorySize() uint64 { return uint64(i.mem.DataSize(i.store)) }

func (i *instance) Close() { i.store.Close() }
