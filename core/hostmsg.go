package core

// The limits and message texts that a host needs besides the core: errors a
// host raises itself, before or instead of calling the core (docs/SPEC.md
// §4, §6). They are written here once; the Go hosts use them, and
// internal/cmd/genconsts (`go generate ./...`) writes them into the Python
// and JavaScript bindings, so no binding spells a limit or a message.
//
// A message format's only verbs are %d (an integer) and %s (a string), one per
// argument in order, and %% for a percent sign: fmt.Sprintf here, Python's %
// operator, and a generated function in JavaScript all give the same text.

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

// MaxMsgpackLength is the most bytes (or entries) one msgpack str, bin,
// array or map can hold: 2^32 − 1.
const MaxMsgpackLength = 1<<32 - 1

// MaxStringUnits is the longest string V8 (Node, Chromium) can make, in
// UTF-16 units: 2^29 − 24. A JavaScript host cannot decode a response string
// longer than this (MsgStringCeilingFormat).
const MaxStringUnits = 1<<29 - 24
