package main

import (
	"fmt"

	"github.com/polyloop/assembly/core"
)

// engine is one build of the core.
type engine interface {
	Name() string
	AssembleBytes(request []byte) []byte
	Close() error
}

type native struct{}

func (native) Name() string                  { return "native" }
func (native) AssembleBytes(b []byte) []byte { return core.AssembleBytes(b) }
func (native) Close() error                  { return nil }

// engines maps --engine names to constructors; wasm engines register
// themselves in their own files.
var engines = map[string]func(wasmPath string) (engine, error){
	"native": func(string) (engine, error) { return native{}, nil },
}

func openEngine(name, wasmPath string) (engine, error) {
	open, ok := engines[name]
	if !ok {
		switch name {
		case "wasmtime":
			return nil, fmt.Errorf("--engine wasmtime needs cgo: build with CGO_ENABLED=1 and a C compiler, or use --engine wazero")
		}
		return nil, fmt.Errorf("--engine must be native, wazero or wasmtime, not %q", name)
	}
	return open(wasmPath)
}
