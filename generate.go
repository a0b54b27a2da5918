package assembly

// What a binding must know of the host contract (the module's calls, error
// codes, limits, pool defaults, message texts, the cache's layout) is
// written once in Go (core/abi, and core/errors.go for the error codes) and
// generated into bindings/python and bindings/js by tools/genconsts;
// TestGeneratedFilesAreCurrent fails while a generated file is stale.
//go:generate go run ./tools/genconsts
