package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/polyloop/assembly/core/abi"
)

// OpenWazero compiles the module under wazero. Its compiled code is cached in
// <cache root>/wazero/ (wazero's own format, keyed by the module and
// wazero's version), compiled under the lock <cache root>/wazero.lock so
// that processes starting together on a cold cache compile once. A cache
// root, wazero/ or a directory in it that another user could write is not
// handed to wazero (trustedDirs): it compiles in memory, with one notice.
func OpenWazero(c Config) (Engine, error) {
	c = c.WithDefaults()
	wasm, err := LoadModule(c)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	pages := uint32(c.MemoryLimitBytes / 65536)
	var cache wazero.CompilationCache
	if root := CacheRoot(c.CacheDir); root != "" && trustedDirs(root, filepath.Join(root, "wazero")) {
		// An unusable directory falls back to compiling in memory.
		if cc, err := wazero.NewCompilationCacheWithDir(filepath.Join(root, "wazero")); err == nil {
			if trustedDirs(wazeroDirs(root)...) { // as made, with wazero's version directory
				cache = cc
				if unlock, err := lockFile(filepath.Join(root, "wazero.lock")); err == nil {
					defer unlock()
				}
			} else {
				cc.Close(ctx)
			}
		}
	}
	e, err := compileWazero(ctx, wasm, pages, cache)
	if err != nil && cache != nil {
		// A corrupt cache entry: compile again without the cache.
		cache.Close(ctx)
		cache = nil
		e, err = compileWazero(ctx, wasm, pages, nil)
	}
	if err != nil {
		return nil, err
	}
	e.cache = cache
	return e, nil
}

// wazeroDirs are the cache root, its wazero/ and what is in that: the
// directories wazero reads compiled code from.
func wazeroDirs(root string) []string {
	dir := filepath.Join(root, "wazero")
	dirs := []string{root, dir}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		dirs = append(dirs, filepath.Join(dir, e.Name()))
	}
	return dirs
}

func compileWazero(ctx context.Context, wasm []byte, pages uint32, cache wazero.CompilationCache) (*wazeroEngine, error) {
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(pages)
	if cache != nil {
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wazero: WASI: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("wazero: compiling the module: %w", err)
	}
	funcs, mems := compiled.ExportedFunctions(), compiled.ExportedMemories()
	for _, name := range Exports {
		if _, ok := funcs[name]; !ok && mems[name] == nil {
			rt.Close(ctx)
			return nil, fmt.Errorf("wazero: the module does not export %q; rebuild it with 'make wasm' (a module from another release?)", name)
		}
	}
	return &wazeroEngine{ctx: ctx, rt: rt, compiled: compiled}, nil
}

type wazeroEngine struct {
	ctx      context.Context
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	cache    wazero.CompilationCache
}

func (e *wazeroEngine) Name() string { return "wazero" }

func (e *wazeroEngine) NewInstance() (Instance, error) {
	stderr := &StderrBuffer{}
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module
		WithStartFunctions("_initialize").
		WithStderr(stderr).
		WithSysNanotime().WithSysWalltime().WithSysNanosleep() // the fake clock stalls Go's GC
	mod, err := e.rt.InstantiateModule(withReservedMemory(e.ctx), e.compiled, cfg)
	if err != nil {
		return nil, err
	}
	return &wazeroInstance{
		ctx: e.ctx, mod: mod, mem: mod.Memory(), stderr: stderr,
		buffer: mod.ExportedFunction("buffer"),
		call:   mod.ExportedFunction("call"),
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
	ctx          context.Context
	mod          api.Module
	mem          api.Memory
	stderr       *StderrBuffer
	buffer, call api.Function
	stack        [2]uint64
}

// ErrBounds is a read or write outside linear memory.
var ErrBounds = errors.New("out of the bounds of linear memory")

func (w *wazeroInstance) Buffer(size uint32) (ptr, capacity uint32, err error) {
	w.stack[0] = uint64(size)
	if err := w.buffer.CallWithStack(w.ctx, w.stack[:]); err != nil {
		return 0, 0, err
	}
	return uint32(w.stack[0] >> 32), uint32(w.stack[0]), nil
}

func (w *wazeroInstance) Call(op abi.Call, size uint32) (uint64, error) {
	w.stack[0], w.stack[1] = uint64(op), uint64(size)
	if err := w.call.CallWithStack(w.ctx, w.stack[:]); err != nil {
		return 0, err
	}
	return w.stack[0], nil
}

func (w *wazeroInstance) Write(ptr uint32, b []byte) error {
	if !w.mem.Write(ptr, b) {
		return ErrBounds
	}
	return nil
}

func (w *wazeroInstance) Read(ptr, size uint32) ([]byte, error) {
	b, ok := w.mem.Read(ptr, size)
	if !ok {
		return nil, ErrBounds
	}
	return b, nil
}

func (w *wazeroInstance) MemorySize() uint64 { return uint64(w.mem.Size()) }

func (w *wazeroInstance) Stderr() string { return w.stderr.String() }

func (w *wazeroInstance) Close() { w.mod.Close(w.ctx) }
