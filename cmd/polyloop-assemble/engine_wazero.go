package main

import "github.com/polyloop/assembly/wasmhost"

type wasmEngine struct{ *wasmhost.Runner }

func (w wasmEngine) Name() string { return w.Runner.Engine() }

func init() {
	engines["wazero"] = func(path string) (engine, error) {
		r, err := wasmhost.New(wasmhost.Options{ModulePath: path, MaxInstances: 1})
		if err != nil {
			return nil, err
		}
		return wasmEngine{r}, nil
	}
}
