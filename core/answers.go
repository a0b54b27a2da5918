package core

import (
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/core/msgfmt"
	"github.com/polyloop/assembly/core/msgp"
)

// The answers of the module's calls that the core makes for a host: an
// error in the shape of a call's answer, the check of an answer's layout,
// and a batch. The calls themselves are the contract's table, abi.Calls.

// AppendArgs appends the request of call c whose request is a map of its
// arguments (abi.Spec.Params): {Params[i]: args[i]}, each argument already
// msgpack. A host's generic call packs with it (or, in another language,
// with its codec and the generated CALLS row), so no host packs one call's
// request by hand. When len(args) is not len(Params) (or c is no call of
// the table) it appends nothing and returns malformed_request naming the
// call and the counts: never a panic.
func AppendArgs(dst []byte, c abi.Call, args ...[]byte) ([]byte, *Error) {
	if err := checkArgs(c, len(args)); err != nil {
		return dst, err
	}
	params := abi.Calls[c.Base()].Params
	dst = msgp.AppendMapHeader(dst, uint32(len(params)))
	for i, p := range params {
		dst = append(msgp.AppendString(dst, p), args[i]...)
	}
	return dst, nil
}

// checkArgs is the error of n arguments for call c (nil when c takes n):
// malformed_request, naming the call, its parameters and n.
func checkArgs(c abi.Call, n int) *Error {
	if c.Base() >= abi.NumCalls {
		return newError(CodeMalformedRequest, "", "no call numbered "+strconv.Itoa(int(c.Base()))+" in the contract's table (abi.Calls)")
	}
	params := abi.Calls[c.Base()].Params
	switch {
	case len(params) == 0:
		return newError(CodeMalformedRequest, "", c.Name()+" takes no map of arguments (its request is one value: give it to AppendCall), got "+plural(n, "argument"))
	case n != len(params):
		return newError(CodeMalformedRequest, "", c.Name()+" takes "+plural(len(params), "argument")+" ("+strings.Join(params, ", ")+"), got "+strconv.Itoa(n))
	}
	return nil
}

// plural is "1 argument", "2 arguments".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// AppendCallError appends the answer of call c to a request it could not
// read (an unknown call, a size past the request buffer): an internal error
// with message msg, in the shape of c's answer (AppendErrorAnswer).
func AppendCallError(dst []byte, c abi.Call, msg string) []byte {
	return AppendErrorAnswer(dst, c, &Error{Code: CodeInternal, Message: msg, Offset: -1})
}

// AppendErrorAnswer appends the answer of call c that fails with e, in the
// shape of c's answer (abi.Calls): an error view, a comparison's JSON error,
// or else an error response (an unknown c too). A host answers a call the
// module could not (it trapped, ran out of memory) with it.
func AppendErrorAnswer(dst []byte, c abi.Call, e *Error) []byte {
	switch answerOf(c) {
	case abi.AnswerView:
		return AppendErrorView(dst, e, -1)
	case abi.AnswerJSON:
		return AppendCompareError(dst, e)
	case abi.AnswerMap:
		return AppendMapError(dst, e)
	}
	return append(dst, encodeError(e)...)
}

// AppendRequestTooLarge appends the answer of call c to a request of size
// bytes, over abi.MaxRequestBytes, that a host did not read whole or could
// not hand to the module: too_large at "" (abi.MsgRequestTooLargeFormat), in
// the shape of c's answer, the answer the core gives such a request. A host
// knows only the size.
func AppendRequestTooLarge(dst []byte, c abi.Call, size int64) []byte {
	return AppendErrorAnswer(dst, c, newError(CodeTooLarge, "", msgfmt.Sprintf(abi.MsgRequestTooLargeFormat, size)))
}

// answerOf is the shape of c's answer; an unknown call answers a response.
func answerOf(c abi.Call) abi.Answer {
	if c = c.Base(); c >= abi.NumCalls {
		return abi.AnswerResponse
	}
	return abi.Calls[c].Answer
}

// IsAnswer reports whether b has the layout of an answer of call c: the
// head of its response (map header, v: 1, ok) for the response shapes and
// inside a view answer after its length, a JSON object for a comparison,
// whole items for a batch (or an error response, for a batch the module
// could not read). A host checks what the module answered with it:
// a module of another release (or a broken one) fails it; the full
// decoding is the host's.
func IsAnswer(c abi.Call, b []byte) bool {
	switch kind := answerOf(c); kind {
	case abi.AnswerView:
		if len(b) < 4 || uint64(le32(b)) > uint64(len(b)-4) {
			return false
		}
		return isResponse(abi.AnswerResponse, b[4:4+le32(b)])
	case abi.AnswerJSON:
		return len(b) > 2 && b[0] == '{' && b[len(b)-1] == '}'
	case abi.AnswerMap:
		return len(b) > 0 && (b[0]&0xf0 == 0x80 || b[0] == 0xde || b[0] == 0xdf)
	case abi.AnswerNamed: // the error call: an answer of any other call's shape
		for k := range abi.NumCalls {
			if a := abi.Calls[k].Answer; a != abi.AnswerNamed && a != abi.AnswerBatch && IsAnswer(k, b) {
				return true
			}
		}
		return false
	case abi.AnswerBatch:
		if hasHead(b, 3, false) {
			return true // a batch the module could not read at all
		}
		for len(b) > 0 {
			if len(b) < 4 || uint64(le32(b)) > uint64(len(b)-4) {
				return false
			}
			b = b[4+le32(b):]
		}
		return true
	default:
		return isResponse(kind, b)
	}
}

// isResponse reports whether b starts with the head of an ok response of
// the shape kind (its keys: 8 for a response, 10 with the prompt's state and segments, 6
// for an add_step response) or of an error response, and goes on after it.
func isResponse(kind abi.Answer, b []byte) bool {
	keys := 8
	switch kind {
	case abi.AnswerPromptStart:
		keys = 10
	case abi.AnswerStep:
		keys = 6
	}
	return hasHead(b, keys, true) || hasHead(b, 3, false)
}

// ResponseOK reports whether the wire response b (of assemble, prompt_start
// or add_step) is ok, read from its head as IsAnswer reads it: a host that
// only routes the bytes (the command-line tool's exit code) needs no more.
func ResponseOK(b []byte) bool {
	return hasHead(b, 8, true) || hasHead(b, 10, true) || hasHead(b, 6, true)
}

func hasHead(b []byte, keys int, ok bool) bool {
	var buf [16]byte
	head := appendHead(buf[:0], keys, ok)
	return len(b) > len(head) && string(b[:len(head)]) == string(head)
}

// AppendBatch appends the answer of a batch (wasm/README.md, "Batches"):
// several calls in one crossing, so a host that has many requests pays one
// crossing (and, in Python, one release of the GIL) for all of them. req is
// a sequence of items, each op and size as unsigned 32-bit little-endian
// numbers and then size bytes of request; the answer is, item by item, the
// length of its answer (32-bit little-endian) and the answer run(op, ...)
// appends, exactly the bytes call(op) would answer alone. An item that is
// cut short, or whose op is a batch or unknown, is answered with an internal
// error of its op's shape, and the batch ends there.
func AppendBatch(dst, req []byte, run func(c abi.Call, dst, req []byte) []byte) []byte {
	for len(req) > 0 {
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var c abi.Call
		var size uint32
		if len(req) >= 4 {
			c = abi.Call(le32(req))
		}
		if len(req) >= 8 {
			size = le32(req[4:])
		}
		switch {
		case len(req) < 8 || uint64(size) > uint64(len(req)-8):
			dst = AppendCallError(dst, c, "batch: an item is cut short (its op and size, or fewer bytes than its size)")
			req = nil
		case c.Base() >= abi.NumCalls || c.Words() >= len(abi.Vocabularies) || abi.Calls[c.Base()].Arg == abi.ArgBatch:
			dst = AppendCallError(dst, abi.CallAssemble, "batch: an item's op is a batch or unknown")
			req = nil
		default:
			dst = run(c, dst, req[8:8+size])
			req = req[8+size:]
		}
		n := uint32(len(dst) - at - 4)
		dst[at], dst[at+1], dst[at+2], dst[at+3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	}
	return dst
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
