package main

import "github.com/polyloop/assembly/wasmhost"

func init() { engines["wazero"] = wasmhost.New }
