package core

import (
	"sync/atomic"
	"unsafe"
)

// The prefix digests of docs/SPEC.md §6: SHA-256 (sha256.go) of the canonical
// encoding of the messages up to the end of each segment.

// prefixDigests hashes the canonical encoding of messages[0:count[k]], given
// the encoded messages and the byte offset where each prefix ends.
func prefixDigests(encoded []byte, byteEnd, count [3]int) [3]string {
	prefix := encoded[:byteEnd[2]]
	if c := lastDigests.Load(); c != nil && c.byteEnd == byteEnd && c.count == count && equalText(c.prefix, unsafe.String(unsafe.SliceData(prefix), len(prefix))) {
		return c.digests
	}
	var d [3]string
	var hdr [5]byte
	for k := range 3 {
		if k > 0 && count[k] == count[k-1] {
			d[k] = d[k-1] // an empty segment: the same prefix
			continue
		}
		sum := sha256Sum(appendArrayHeader(hdr[:0], count[k]), encoded[:byteEnd[k]])
		d[k] = hexString(sum)
	}
	if len(prefix) <= maxCachedPrefix {
		lastDigests.Store(&digestCache{prefix: string(prefix), byteEnd: byteEnd, count: count, digests: d})
	}
	return d
}

// hexString is sum in lowercase hex, as encoding/hex writes it (which the
// core does not import: it links fmt).
func hexString(sum [32]byte) string {
	const digits = "0123456789abcdef"
	var h [64]byte
	for i, c := range sum {
		h[2*i], h[2*i+1] = digits[c>>4], digits[c&0x0f]
	}
	return string(h[:])
}

// lastDigests remembers the digests of the last prefix hashed: an agent loop
// sends the same run, injection and goal messages with every step, and
// comparing the prefix costs far less than hashing it three times (in the
// WebAssembly module SHA-256 runs at about 40 MB/s).
var lastDigests atomic.Pointer[digestCache]

const maxCachedPrefix = 1 << 16

type digestCache struct {
	prefix         string
	byteEnd, count [3]int
	digests        [3]string
}
