// Package hosttest proves that every build of the core answers byte for byte
// alike: the native package, the WebAssembly module under wazero and under
// wasmtime-go. It holds tests only; run them with `make test.host` (which
// builds the module first) or `go test ./host-test/` with
// POLYLOOP_ASSEMBLY_WASM pointing at wasm/assembly.wasm.
package hosttest
