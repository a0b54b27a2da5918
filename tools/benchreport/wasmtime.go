//go:build cgo

package main

import "github.com/polyloop/assembly/wasmhost/wasmtime"

// wasmtime-go needs cgo; without it the wasmtime-go rows are not measured.
func init() { newWasmtime = wasmtime.New }
