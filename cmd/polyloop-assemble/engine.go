package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"

	assembly "github.com/polyloop/assembly"
	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	plumbing "github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/wasm/dispatch"
	"github.com/polyloop/assembly/wasmhost"
)

// engine is one build of the core; AppendCall is safe for concurrent use.
type engine interface {
	Name() string
	// AppendCall appends the answer of call c (abi.Calls: assemble, its
	// view for the text output, compare) to request.
	AppendCall(c abi.Call, dst, request []byte) []byte
	Close() error
}

// native runs the module's functions compiled into this binary.
type native struct{}

func (native) Name() string { return "native" }
func (native) AppendCall(c abi.Call, dst, b []byte) []byte {
	return dispatch.Append(c, dst, b)
}
func (native) Close() error { return nil }

// wasmEngine is the module on wazero or wasmtime.
type wasmEngine struct {
	*wasmhost.Runner
	sha256 string // of the module
	path   string // where the module was read from ("" if found by default)
}

func (w wasmEngine) Name() string { return w.Runner.Engine() }

// engines maps the wasm engines' --engine names to their constructors; they
// register themselves in their own files (wasmtime only with cgo).
var engines = map[string]func(wasmhost.Options) (*wasmhost.Runner, error){}

var errUnknownEngine = errors.New("unknown engine")

// openEngine opens --engine name; a wasm engine runs up to jobs instances.
func openEngine(name, wasmPath string, jobs int) (engine, error) {
	if name == "native" {
		return native{}, nil
	}
	open, ok := engines[name]
	if !ok {
		if name == "wasmtime" {
			return nil, errors.New("--engine wasmtime needs cgo: build with CGO_ENABLED=1 and a C compiler, or use --engine wazero")
		}
		return nil, fmt.Errorf("%w: --engine must be native, wazero or wasmtime, not %q", errUnknownEngine, name)
	}
	module, err := plumbing.LoadModule(plumbing.Config{ModulePath: wasmPath})
	if errors.Is(err, plumbing.ErrNoModule) {
		where := "wasm/assembly.wasm was not found from this directory upwards and $POLYLOOP_ASSEMBLY_WASM is not set"
		if wasmPath != "" {
			where = wasmPath + " does not exist"
		}
		return nil, fmt.Errorf("--engine %s needs the module: %s; build it with 'make wasm', or give its path with --wasm PATH", name, where)
	}
	if err != nil {
		return nil, fmt.Errorf("--wasm: %w", err)
	}
	r, err := open(wasmhost.Options{Module: module, MaxInstances: jobs})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(module)
	return wasmEngine{Runner: r, sha256: hex.EncodeToString(sum[:]), path: wasmPath}, nil
}

// versionText is what --version prints: the project's version, and for a
// wasm engine the module's sha256.
func versionText(e engine) string {
	s := "polyloop-assemble " + assembly.Version()
	if w, ok := e.(wasmEngine); ok {
		s += fmt.Sprintf("\nmodule sha256 %s (engine %s)", w.sha256, w.Name())
	} else {
		s += "\nengine native (the core compiled into this binary)"
	}
	return s
}

// callArgs is the answer of call c, whose request is a map of its
// arguments, on args (core.AppendArgs); a wrong count is c's error answer.
func callArgs(eng engine, c abi.Call, args ...[]byte) []byte {
	size := 64 // the map's header and the parameters' names
	for _, a := range args {
		size += len(a)
	}
	req, err := core.AppendArgs(make([]byte, 0, size), c, args...) // sized once: a 64 MB usage is not copied as it grows
	if err != nil {
		return core.AppendErrorAnswer(nil, c, err)
	}
	if len(req) > 16<<20 {
		// The inputs read, their msgpack and the arguments are garbage
		// now; a one-shot process gives their memory back before the
		// module takes its own, so that a call's peak is not their sum.
		args = nil
		debug.FreeOSMemory()
	}
	return eng.AppendCall(c, nil, req)
}
