package assembly

// The constants a binding must know (error codes, limits, pool defaults,
// message texts) are written once in Go (core/, internal/engine) and
// generated into bindings/python and bindings/js by tools/genconsts;
// TestGeneratedFilesAreCurrent fails while a generated file is stale.
//go:generate go run ./tools/genconsts
