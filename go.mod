module github.com/polyloop/assembly

go 1.26

require (
	github.com/bytecodealliance/wasmtime-go/v39 v39.0.1
	github.com/tetratelabs/wazero v1.12.0
	github.com/tinylib/msgp v1.6.5
)

require (
	github.com/philhofer/fwd v1.2.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
)
