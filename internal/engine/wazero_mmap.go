//go:build unix

package engine

import (
	"context"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// withReservedMemory makes each wazero instance's linear memory one mapping
// of its maximum size, reserved but not committed: growing it only extends
// the slice over pages the kernel provides on first touch. wazero's default
// grows a Go slice by append, which copies the whole memory and holds old
// and new at once: a 1 GiB request with its 1 GiB response peaked at 4.3
// times their size (docs/SPEC.md §4); with the mapping it is the memory itself.
func withReservedMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		return &mmapMemory{max: max}
	}))
}

type mmapMemory struct {
	buf []byte // the whole reservation, mapped on the first Reallocate
	max uint64
}

func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if m.buf == nil {
		b, err := syscall.Mmap(-1, 0, int(max(m.max, 1)), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
		if err != nil {
			return nil
		}
		m.buf = b
	}
	return m.buf[:size]
}

func (m *mmapMemory) Free() {
	if m.buf != nil {
		syscall.Munmap(m.buf)
		m.buf = nil
	}
}
