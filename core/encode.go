package core

import (
	"strings"
	"unsafe"
)

// The canonical msgpack encoding of a response (docs/SPEC.md §6): the ok response
// written from the plan, and the error response. One set of writers (the
// shortest form of each header, as msgp writes it) and one set of keys,
// each encoded once.

// Keys of the response (and of a step, for the decoder's fast path), each encoded once (a str header and the name). The
// sizes in size.go are sums of their lengths.
var (
	keyV               = key("v")
	keyOK              = key("ok")
	keyMessages        = key("messages")
	keyMessageChars    = key("message_chars")
	keyPromptChars     = key("prompt_chars")
	keyContextOverflow = key("context_overflow")
	keyInjected        = key("injected")
	keyPrefixDigests   = key("prefix_digests")
	keyRole            = key("role")
	keyContent         = key("content")
	keyType            = key("type")
	keyText            = key("text")
	keyChannel         = key("channel")
	keyEntryID         = key("entry_id")
	keyMessageIndex    = key("message_index")
	keyRun             = key("run")
	keyInjections      = key("injections")
	keyGoal            = key("goal")
	keyError           = key("error")
	keyCode            = key("code")
	keyMessage         = key("message")
	keyPath            = key("path")
	keyOffset          = key("offset")
	keyRawOutput       = key("raw_output")
	keyObservation     = key("observation")
	// Keys of the add_step response (addstep.go).
	keyPrompt        = key("prompt")
	keySteps         = key("steps")
	keyResponseBytes = key("response_bytes")
	keyRequestBytes  = key("request_bytes")

	// typeText is a block's type value, "text", encoded.
	typeText = key(BlockTypeText)
	// oneTextBlock is a content array of one text block up to its text:
	// [{"type": "text", "text": .
	oneTextBlock = string(appendArrayHeader(nil, 1)) + string(appendMapHeader(nil, 2)) + keyType + typeText + keyText

	// Runs written together, one append each on the hot path: a message up
	// to its role, its content key and one text block, a block up to its
	// type.
	msgHead   = string(appendMapHeader(nil, 2)) + keyRole
	blockHead = string(appendMapHeader(nil, 2)) + keyType
	// A message of one text block up to its text, for the two roles such
	// messages have (injections and observations are user messages, raw
	// outputs assistant ones).
	userTextHead      = msgHead + key(RoleUser) + keyContent + oneTextBlock
	assistantTextHead = msgHead + key(RoleAssistant) + keyContent + oneTextBlock
)

// textHead is the start of a message of one text block from role, which is
// user or assistant.
func textHead(role string) string {
	if role == RoleUser {
		return userTextHead
	}
	return assistantTextHead
}

// key returns s encoded as a msgpack str.
func key(s string) string { return string(appendStr(nil, s)) }

// appendHead writes the start of a response of n keys: the map header, v
// and ok.
func appendHead(out []byte, n int, ok bool) []byte {
	out = appendMapHeader(out, n)
	out = append(out, keyV...)
	out = appendUint(out, WireVersion)
	out = append(out, keyOK...)
	return appendBool(out, ok)
}

// appendTo appends the canonical ok response to out.
func (a *assembly) appendTo(out []byte) []byte { return a.appendResponse(out, 8) }

// appendResponse is appendTo with a map header of keys keys: a
// prompt_start answer appends a ninth (docs/SPEC.md §7.3.1).
func (a *assembly) appendResponse(out []byte, keys int) []byte {
	a.emptyObs = span{}
	out = appendHead(out, keys, true)
	out = append(out, keyMessages...)
	out = appendArrayHeader(out, len(a.msgs))
	msgStart := len(out)
	out, ends := a.appendMessages(out, a.msgs)
	out = a.appendTail(out)
	a.digests = prefixDigests(out[msgStart:], [3]int{ends[0] - msgStart, ends[1] - msgStart, ends[2] - msgStart}, a.segments())
	out = appendDigests(out, a.digests)
	return out
}

func (a *assembly) segments() [3]int { return [3]int{a.runEnd, a.injEnd, a.goalEnd} }

// appendMessages encodes msgs (a prefix of a.msgs) and returns, for each
// segment end, the length of dst where that segment's messages end.
func (a *assembly) appendMessages(dst []byte, msgs []outMsg) ([]byte, [3]int) {
	segs := a.segments()
	var ends [3]int
	k := 0
	for i := range msgs {
		for k < 3 && segs[k] == i {
			ends[k] = len(dst)
			k++
		}
		dst = a.appendMessage(dst, &msgs[i])
	}
	for ; k < 3; k++ {
		ends[k] = len(dst)
	}
	return dst, ends
}

func (a *assembly) appendMessage(dst []byte, m *outMsg) []byte {
	switch m.kind {
	case kCopy:
		dst = append(dst, msgHead...)
		dst = appendStr(dst, m.role)
		dst = append(dst, keyContent...)
		dst = appendArrayHeader(dst, len(m.blocks))
		for _, b := range m.blocks {
			dst = append(dst, blockHead...)
			dst = appendStr(dst, b.Type)
			dst = append(dst, keyText...)
			dst = appendStr(dst, b.Text)
			a.mark(len(dst), len(b.Text))
		}
	case kText:
		dst = append(dst, textHead(m.role)...)
		dst = appendStr(dst, m.text)
		a.mark(len(dst), len(m.text))
	case kObs:
		dst = append(dst, textHead(m.role)...)
		dst = appendStrHeader(dst, m.nbytes)
		if m.text == "" && a.emptyObs.set {
			// The same rendering again: copy it (a template of many
			// fields costs its length once, not once per step).
			dst = append(dst, dst[a.emptyObs.start:a.emptyObs.end]...)
		} else {
			start := len(dst)
			dst = a.tmpl.AppendRender(dst, m.text)
			if m.text == "" {
				a.emptyObs = span{start, len(dst), true}
			}
		}
		a.mark(len(dst), m.nbytes)
	}
	return dst
}

// mark records, for a view, the text block of n bytes that ends at end.
func (a *assembly) mark(end, n int) {
	if a.texts != nil {
		*a.texts = append(*a.texts, end-n-a.textBase, end-a.textBase)
	}
}

// span is a range of bytes already written to the response.
type span struct {
	start, end int
	set        bool
}

// appendTail writes message_chars through injected.
func (a *assembly) appendTail(out []byte) []byte {
	out = append(out, keyMessageChars...)
	out = appendArrayHeader(out, len(a.msgs))
	for i := range a.msgs {
		out = appendUint(out, uint64(a.msgs[i].chars))
	}
	out = append(out, keyPromptChars...)
	out = appendUint(out, uint64(a.promptChars))
	out = append(out, keyContextOverflow...)
	out = appendBool(out, a.overflow())
	out = append(out, keyInjected...)
	out = appendArrayHeader(out, len(a.injected))
	for _, in := range a.injected {
		out = appendMapHeader(out, 3)
		out = append(out, keyChannel...)
		out = appendStr(out, in.Channel)
		out = append(out, keyEntryID...)
		out = appendStr(out, in.EntryID)
		out = append(out, keyMessageIndex...)
		out = appendUint(out, uint64(in.MessageIndex))
	}
	return out
}

func appendDigests(out []byte, d [3]string) []byte {
	out = append(out, keyPrefixDigests...)
	out = appendMapHeader(out, 3)
	out = append(out, keyRun...)
	out = appendStr(out, d[0])
	out = append(out, keyInjections...)
	out = appendStr(out, d[1])
	out = append(out, keyGoal...)
	out = appendStr(out, d[2])
	return out
}

// encodeError writes {v: 1, ok: false, error: {code, message, path}}; an
// invalid_template error carries a fourth key, offset (docs/SPEC.md §6).
func encodeError(e *Error) []byte {
	out := make([]byte, 0, 80+len(e.Message)+len(e.Path))
	out = appendHead(out, 3, false)
	return appendErrorMap(append(out, keyError...), e, e.Code == CodeInvalidTemplate && e.Offset >= 0)
}

// AppendMapError appends the answer of a call of the map shape (export)
// that fails with e: {"error": {code, message, path[, offset]}}, the
// offset where it has one, as the JSON answers write it.
func AppendMapError(dst []byte, e *Error) []byte {
	return appendErrorMap(append(appendMapHeader(dst, 1), keyError...), e, e.Offset >= 0)
}

// appendErrorMap writes e's map: code, message, path, and its offset when
// withOffset.
func appendErrorMap(out []byte, e *Error, withOffset bool) []byte {
	if withOffset {
		out = appendMapHeader(out, 4)
	} else {
		out = appendMapHeader(out, 3)
	}
	out = append(out, keyCode...)
	out = appendStr(out, string(e.Code))
	out = append(out, keyMessage...)
	out = appendStr(out, e.Message)
	out = append(out, keyPath...)
	out = appendStr(out, e.Path)
	if withOffset {
		out = append(out, keyOffset...)
		out = appendUint(out, uint64(e.Offset))
	}
	return out
}

// The writers: appendStr, appendStrHeader, appendArrayHeader,
// appendMapHeader, appendUint and appendBool write what msgp's AppendString,
// AppendArrayHeader, AppendMapHeader, AppendUint64 and AppendBool write (the
// shortest form), with no capacity checks of their own: AssembleBytes
// allocates the exact size first (size.go).
func appendStr(dst []byte, s string) []byte {
	if len(s) <= 31 {
		dst = append(dst, 0xa0|byte(len(s)))
	} else {
		dst = appendStrHeader(dst, len(s))
	}
	return append(dst, s...)
}

func appendStrHeader(dst []byte, n int) []byte {
	switch {
	case n <= 31:
		return append(dst, 0xa0|byte(n))
	case n <= 0xff:
		return append(dst, 0xd9, byte(n))
	case n <= 0xffff:
		return append(dst, 0xda, byte(n>>8), byte(n))
	}
	return append(dst, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendArrayHeader(dst []byte, n int) []byte {
	if n <= 15 {
		return append(dst, 0x90|byte(n))
	}
	if n <= 0xffff {
		return append(dst, 0xdc, byte(n>>8), byte(n))
	}
	return append(dst, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// appendMapHeader writes the header of a map of n ≤ 15 keys (a fixmap: the
// only maps a response holds).
func appendMapHeader(dst []byte, n int) []byte { return append(dst, 0x80|byte(n)) }

// appendAnyMapHeader writes the header of a map of n keys, the shortest.
func appendAnyMapHeader(dst []byte, n int) []byte {
	if n <= 15 {
		return appendMapHeader(dst, n)
	}
	if n <= 0xffff {
		return append(dst, 0xde, byte(n>>8), byte(n))
	}
	return append(dst, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 0xc3)
	}
	return append(dst, 0xc2)
}

func appendUint(dst []byte, u uint64) []byte {
	switch {
	case u <= 0x7f:
		return append(dst, byte(u))
	case u <= 0xff:
		return append(dst, 0xcc, byte(u))
	case u <= 0xffff:
		return append(dst, 0xcd, byte(u>>8), byte(u))
	case u <= 0xffffffff:
		return append(dst, 0xce, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
	}
	return append(dst, 0xcf, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

// makeNoZero returns an empty slice with room for n bytes, without zeroing
// them as make does (writing a large response once is cheaper than clearing
// it first). strings.Builder.Grow allocates without zeroing; the builder is
// dropped and its buffer reused from its first byte.
func makeNoZero(n int) []byte {
	if n < 1024 {
		return make([]byte, 0, n)
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0)
	s := sb.String()
	return unsafe.Slice(unsafe.StringData(s), n)[:0]
}
