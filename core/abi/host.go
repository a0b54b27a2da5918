package abi

// The limits and message texts a host needs besides the core: errors a host
// raises itself, before or instead of calling the core, and the rules of its
// pool (docs/SPEC.md §4, §6, §7.5).

// MaxRequestBytes is the largest request the core decodes; a larger one is
// answered too_large (MsgRequestTooLargeFormat) before decoding.
const MaxRequestBytes = 1 << 30

// MaxResponseBytes bounds an ok response (docs/SPEC.md §4): one that would
// be larger is too_large (MsgResponseTooLarge).
const MaxResponseBytes = 3 << 29 // 1.5 GiB

// MaxMsgpackLength is the most bytes (or entries) one msgpack str, bin,
// array or map can hold: 2^32 − 1.
const MaxMsgpackLength = 1<<32 - 1

// MaxValueDepth is how deep a value the core passes through (a field of
// an export's body) may nest: a value nested deeper is malformed_request
// at its path (MsgValueTooDeep). A host writes every value at least
// MaxValueDepth + 8 levels deep as it is, so that it is the core that gives
// this verdict, the same on every host (docs/SPEC.md §7.13).
const MaxValueDepth = 64

// MsgValueTooDeep is the message of a value nested deeper than
// MaxValueDepth.
const MsgValueTooDeep = "this value nests deeper than 64 levels"

// MaxStringUnits is the longest string V8 (Node, Chromium) can make, in
// UTF-16 units: 2^29 − 24. A JavaScript host cannot decode a response string
// longer than this (MsgStringCeilingFormat).
const MaxStringUnits = 1<<29 - 24

// MaxModuleBufferBytes is the largest buffer the module's 32-bit ABI can be
// handed (wasm/README.md): 2^32 − 1 bytes.
const MaxModuleBufferBytes = 1<<32 - 1

// The pool defaults, the same on every host. MaxInstances defaults to the
// number of CPUs.
const (
	// DefaultRecycleAboveBytes: an instance whose linear memory grew past
	// this is discarded after its call (linear memory never shrinks).
	DefaultRecycleAboveBytes = 256 << 20
	// DefaultMemoryLimitBytes caps one instance's linear memory: the whole
	// 32-bit address space of the module, the default and the most.
	DefaultMemoryLimitBytes = 4 << 30
)

// StderrKeep bounds the module's stderr a host keeps per instance (and in
// an internal error's detail), and the rule is the same on every host: the
// FIRST StderrKeep bytes, never the last (docs/SPEC.md §7.5). The Go runtime
// writes why it died first ("runtime: out of memory: cannot allocate …",
// "fatal error: out of memory") and its goroutine traces after, which can
// be long; a host that kept the end would lose the reason and name an
// out-of-memory a trap.
const StderrKeep = 4096

// StderrOutOfMemory is what the kept stderr holds when the module's Go
// runtime ran out of memory: a failure whose kept stderr contains it is
// MsgOutOfMemory on every host (docs/SPEC.md §7.5). An engine's own error
// may say so too, in its own words (each host's GAP).
const StderrOutOfMemory = "out of memory"

// The messages of a failed call, the same on every host (Go, Python, JS):
// what happened and what the host did, never the engine's own words (those
// go into the error's detail).
const (
	MsgOutOfMemory = "the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one"
	MsgTrapped     = "the assembly module trapped; the instance was discarded and the next call gets a fresh one"
	MsgBadResponse = "the assembly module returned bytes that are not a response; is the module from the same release as this binding?"
)

// MsgRequestTooLargeFormat is the too_large message of a request of %d bytes
// over MaxRequestBytes (path "").
const MsgRequestTooLargeFormat = "the request is %d bytes, over the 1 GiB limit; split it into smaller requests"

// MsgResponseTooLarge is the too_large message of a response that would be
// over MaxResponseBytes (path ""): Assemble's, and an incremental prompt's
// whose whole response would pass the limit (docs/SPEC.md §7).
const MsgResponseTooLarge = "the response would be over the 1.5 GiB limit; split the request (fewer steps, or a narrower template width)"

// MsgValueTooLargeFormat is the too_large message of a host that cannot even
// encode a request: one value (a %s, the host's name of its type, of %d bytes)
// is longer than MaxMsgpackLength, so the request is over MaxRequestBytes.
const MsgValueTooLargeFormat = "a %s of %d bytes cannot be encoded (msgpack holds at most 4 GiB), so the request is over the 1 GiB limit; split it into smaller requests"

// MsgUnreadableValueFormat is the malformed_request message, at the value's
// path, of a host whose reading of a request value raised: the value's type,
// the error's type and the error's text.
const MsgUnreadableValueFormat = "reading this %s raised %s: %s; the request was not sent (fix the value, or pass plain dicts, lists and str)"

// MsgStringCeilingFormat is the too_large message, at the string's path, of a
// JavaScript host whose engine cannot make a response string: its UTF-8
// bytes, where it is (its path, or "the top") and MaxStringUnits.
const MsgStringCeilingFormat = "the response holds a string of %d UTF-8 bytes at %s, longer than this JavaScript engine's strings allow (V8: %d UTF-16 units); assembleBytes() still returns the response bytes"
