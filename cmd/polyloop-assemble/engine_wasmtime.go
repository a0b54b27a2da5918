//go:build cgo

package main

import (
	"github.com/polyloop/assembly/wasmhost"
	"github.com/polyloop/assembly/wasmhost/wasmtime"
)

func init() {
	engines["wasmtime"] = func(path string) (engine, error) {
		r, err := wasmtime.New(wasmhost.Options{ModulePath: path, MaxInstances: 1})
		if err != nil {
			return nil, err
		}
		return wasmEngine{r}, nil
	}
}
