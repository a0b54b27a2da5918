//go:build cgo

package main

import "github.com/polyloop/assembly/wasmhost/wasmtime"

func init() { engines["wasmtime"] = wasmtime.New }
