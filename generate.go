package assembly

// The constants a binding must know (error codes, limits, pool defaults,
// message texts) are written once in Go (core/, internal/engine) and
// generated into bindings/python and bindings/js by internal/cmd/genconsts;
// TestGeneratedFilesAreCurrent fails while a generated file is stale.
//go:generate go run ./internal/cmd/genconsts
