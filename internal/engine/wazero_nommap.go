//go:build !unix

package engine

import "context"

// withReservedMemory keeps wazero's own linear memory where there is no
// mmap (see wazero_mmap.go).
func withReservedMemory(ctx context.Context) context.Context { return ctx }
