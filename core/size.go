package core

import "github.com/polyloop/assembly/core/abi"

// The exact size of the ok response, computed before it is written: the
// response is allocated once, and one that would pass MaxResponseBytes is
// too_large before anything is written (docs/SPEC.md §6). The writers it mirrors
// are in encode.go; TestEncodedSizeExact pins that the two agree.

// MaxResponseBytes bounds the size of a response. A request whose response
// would be larger (a wide template field repeated over many steps, say) is
// answered with CodeTooLarge (abi.MsgResponseTooLarge) instead of
// exhausting memory.
const MaxResponseBytes = abi.MaxResponseBytes

// maxResponse is MaxResponseBytes; tests lower it to check the limit at
// the boundary without building 1.5 GiB.
var maxResponse = MaxResponseBytes

// encodedSize returns the exact size of the ok response of an assembly
// build laid out, or too_large: the response is too_large exactly when its
// canonical encoding would be longer than MaxResponseBytes. The sum of the
// messages is a.body, which build added up as it laid them out; it
// saturates (it stops past MaxResponseBytes), so no request can make it
// overflow.
func (a *assembly) encodedSize() (int, *Error) {
	size := okSize(a.fixedSize()+a.body, len(a.msgs), a.promptChars)
	return size, checkResponseSize(size)
}

// size is what m adds to the response: the message and its message_chars
// entry. A message's parts are each below 2^62 bytes (a rendering is at
// most 4 bytes per code point of the observation times 2^30 fields), so the
// sum does not overflow.
func (m *outMsg) size() int {
	return m.encodedSize() + uintSize(uint64(m.chars))
}

func (m *outMsg) encodedSize() int {
	n := msgSize() + strSize(len(m.role))
	switch m.kind {
	case kCopy:
		n += blocksSize(m.blocks)
	case kText:
		n += len(oneTextBlock) + strSize(len(m.text))
	case kObs:
		n += len(oneTextBlock) + strSize(m.nbytes)
	}
	return n
}

// fixedSize is the size of the ok response but its messages, the headers
// of the messages and message_chars arrays and the prompt_chars value.
func (a *assembly) fixedSize() int { return fixedSize(a.injected) }

func fixedSize(injected []Injected) int {
	size := 1 + len(keyV) + 1 + len(keyOK) + 1 + len(keyMessages) + len(keyMessageChars)
	size += len(keyPromptChars) + len(keyContextOverflow) + 1 + len(keyInjected) + hdrSize(len(injected))
	for _, in := range injected {
		size += 1 + len(keyChannel) + strSize(len(in.Channel)) + len(keyEntryID) + strSize(len(in.EntryID))
		size += len(keyMessageIndex) + uintSize(uint64(in.MessageIndex))
	}
	// prefix_digests: a map of three keys, each a 64-digit hex str.
	return size + len(keyPrefixDigests) + 1 + len(keyRun) + len(keyInjections) + len(keyGoal) + 3*strSize(64)
}

// msgSize is the size of a message's map header and keys: {role: ...,
// content: ...}.
func msgSize() int { return len(msgHead) + len(keyContent) }

// blocksSize is the size of a content array.
func blocksSize(blocks []Block) int {
	n := hdrSize(len(blocks))
	for _, b := range blocks {
		n += len(blockHead) + strSize(len(b.Type)) + len(keyText) + strSize(len(b.Text))
	}
	return n
}

func strSize(n int) int {
	switch {
	case n <= 31:
		return 1 + n
	case n <= 0xff:
		return 2 + n
	case n <= 0xffff:
		return 3 + n
	}
	return 5 + n
}

func hdrSize(n int) int {
	switch {
	case n <= 15:
		return 1
	case n <= 0xffff:
		return 3
	}
	return 5
}

func uintSize(u uint64) int {
	switch {
	case u <= 0x7f:
		return 1
	case u <= 0xff:
		return 2
	case u <= 0xffff:
		return 3
	case u <= 0xffffffff:
		return 5
	}
	return 9
}

// checkResponseSize is too_large when size is over MaxResponseBytes.
func checkResponseSize(size int) *Error {
	if size <= maxResponse {
		return nil
	}
	return newError(CodeTooLarge, "", abi.MsgResponseTooLarge)
}

// The size of an ok response of n messages and prompt_chars chars is its
// body (every byte but the headers of the two arrays of one entry per
// message, and the prompt_chars value) plus those: appending messages adds
// their bytes to the body and changes only the headers and the value. This
// is how a prompt keeps its response size at a cost independent of the
// history (docs/SPEC.md §7.3), and how encodedSize adds it up.

// okSize is the size of an ok response of body bytes, n messages and chars
// prompt_chars.
func okSize(body, n int, chars int64) int {
	return body + 2*hdrSize(n) + uintSize(uint64(chars))
}

// okBody is the body of an ok response of size bytes, n messages and chars
// prompt_chars (okSize's inverse).
func okBody(size, n int, chars int64) int {
	return size - 2*hdrSize(n) - uintSize(uint64(chars))
}

// minMessageSize is the least a message adds to a response: {role: "user",
// content: []} and its message_chars entry 0. A message of c code points
// adds at least c bytes more (its text).
func minMessageSize() int { return msgSize() + strSize(len(RoleUser)) + hdrSize(0) + uintSize(0) }
