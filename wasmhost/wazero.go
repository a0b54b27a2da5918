package wasmhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// New returns a Runner of the module under wazero.
func New(opts Options) (*Runner, error) {
	e, err := newWazero(opts)
	if err != nil {
		return nil, err
	}
	return NewRunner(e, opts), nil
}

type wazeroEngine struct {
	ctx      context.Context
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	cache    wazero.CompilationCache
}

func newWazero(opts Options) (*wazeroEngine, error) {
	opts = opts.withDefaults()
	wasm, err := LoadModule(opts)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(uint32(opts.MaxMemoryBytes / 65536))
	var cache wazero.CompilationCache
	if dir := CacheDir(opts, "wazero"); dir != "" {
		// wazero keys its cache by the module's hash and its own version;
		// an unusable directory falls back to compiling in memory.
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			cache = c
			cfg = cfg.WithCompilationCache(c)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wazero: WASI: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil && cache != nil {
		// A corrupt cache entry: compile again without the cache.
		rt.Close(ctx)
		cache.Close(ctx)
		cache = nil
		rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(uint32(opts.MaxMemoryBytes/65536)))
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			rt.Close(ctx)
			return nil, fmt.Errorf("wazero: WASI: %w", err)
		}
		compiled, err = rt.CompileModule(ctx, wasm)
	}
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wazero: compiling the module: %w", err)
	}
	for _, name := range []string{"_initialize", "alloc", "free", "assemble"} {
		if _, ok := compiled.ExportedFunctions()[name]; !ok {
			rt.Close(ctx)
			return nil, fmt.Errorf("wazero: the module does not export %q; rebuild it with 'make wasm'", name)
		}
	}
	return &wazeroEngine{ctx: ctx, rt: rt, compiled: compiled, cache: cache}, nil
}

func (e *wazeroEngine) Name() string { return "wazero" }

func (e *wazeroEngine) NewInstance() (Instance, error) {
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module
		WithStartFunctions("_initialize").
		WithSysNanotime().WithSysWalltime().WithSysNanosleep() // the fake clock stalls Go's GC
	mod, err := e.rt.InstantiateModule(withReservedMemory(e.ctx), e.compiled, cfg)
	if err != nil {
		return nil, err
	}
	return &wazeroInstance{
		ctx: e.ctx, mod: mod, mem: mod.Memory(),
		alloc:    mod.ExportedFunction("alloc"),
		free:     mod.ExportedFunction("free"),
		assemble: mod.ExportedFunction("assemble"),
	}, nil
}

func (e *wazeroEngine) Close() error {
	err := e.rt.Close(e.ctx)
	if e.cache != nil {
		e.cache.Close(e.ctx)
	}
	return err
}

type wazeroInstance struct {
	ctx                   context.Context
	mod                   api.Module
	mem                   api.Memory
	alloc, free, assemble api.Function
	stack                 [2]uint64
}

var errBounds = errors.New("out of the bounds of linear memory")

func (w *wazeroInstance) Alloc(size uint32) (uint32, error) {
	w.stack[0] = uint64(size)
	if err := w.alloc.CallWithStack(w.ctx, w.stack[:]); err != nil {
		return 0, err
	}
	return uint32(w.stack[0]), nil
}

func (w *wazeroInstance) Assemble(ptr, size uint32) (uint64, error) {
	w.stack[0], w.stack[1] = uint64(ptr), uint64(size)
	if err := w.assemble.CallWithStack(w.ctx, w.stack[:]); err != nil {
		return 0, err
	}
	return w.stack[0], nil
}

func (w *wazeroInstance) Free(ptr uint32) error {
	w.stack[0] = uint64(ptr)
	return w.free.CallWithStack(w.ctx, w.stack[:])
}

func (w *wazeroInstance) Write(ptr uint32, b []byte) error {
	if !w.mem.Write(ptr, b) {
		return errBounds
	}
	return nil
}

func (w *wazeroInstance) Read(ptr, size uint32) ([]byte, error) {
	b, ok := w.mem.Read(ptr, size)
	if !ok {
		return nil, errBounds
	}
	return b, nil
}

func (w *wazeroInstance) MemorySize() uint64 { return uint64(w.mem.Size()) }

func (w *wazeroInstance) Close() { w.mod.Close(w.ctx) }
