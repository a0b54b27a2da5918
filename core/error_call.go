package core

import (
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/core/msgfmt"
	"github.com/polyloop/assembly/core/msgp"
)

// AppendErrorCallBytes is the module's error call (abi.CallError,
// docs/SPEC.md §7.10): it reads a map of the call's arguments
// (abi.ErrorParams) and appends the answer of the call it names failing
// with that error, in that call's shape (AppendErrorAnswer), so a host
// packs no error and writes no path. A request it cannot read is answered
// with an internal error saying why, in the shape of the call it names
// (assemble's when that is unknown).
func AppendErrorCallBytes(dst, request []byte) []byte {
	c, e := hostError(request)
	return AppendErrorAnswer(dst, c, e)
}

// hostError is the call an error request names and its error.
func hostError(request []byte) (abi.Call, *Error) {
	bad := func(c abi.Call, what string) (abi.Call, *Error) {
		return c, newError(CodeInternal, "", "error call: "+what+" (is the binding from the same release as the module?)")
	}
	v, rest, err := msgp.ReadIntfBytes(request)
	args, ok := v.(map[string]any)
	if err != nil || len(rest) != 0 || !ok {
		return bad(abi.CallAssemble, "the request is not a msgpack map of its arguments")
	}
	c := abi.CallAssemble
	if n, ok := uintArg(args["call"]); ok && n < uint64(abi.NumCalls) {
		c = abi.Call(n)
	} else {
		return bad(c, "call is not the op number of a call")
	}
	for k := range args {
		if !isErrorParam(k) {
			return bad(c, "unknown argument "+quote(k))
		}
	}
	size, _ := uintArg(args["size"])
	kind, _ := args["error"].(string)
	switch kind {
	case "too_large":
		return c, newError(CodeTooLarge, "", msgfmt.Sprintf(abi.MsgRequestTooLargeFormat, int64(size)))
	case "value_too_large":
		name, _ := args["type_name"].(string)
		return c, newError(CodeTooLarge, "", msgfmt.Sprintf(abi.MsgValueTooLargeFormat, name, int64(size)))
	case "trapped":
		return c, newError(CodeInternal, "", abi.MsgTrapped)
	case "out_of_memory":
		return c, newError(CodeInternal, "", abi.MsgOutOfMemory)
	case "not_a_response":
		return c, newError(CodeInternal, "", abi.MsgBadResponse)
	case "string_ceiling":
		path, ok := answerPath(args["path"], args["message_base"])
		if !ok {
			return bad(c, "path is not an array of map keys and indexes")
		}
		at := path
		if at == "" {
			at = "the top"
		}
		return c, newError(CodeTooLarge, path, msgfmt.Sprintf(abi.MsgStringCeilingFormat, int64(size), at, int64(abi.MaxStringUnits)))
	}
	return bad(c, "error is not one of the host errors")
}

func isErrorParam(k string) bool {
	for _, p := range abi.ErrorParams {
		if k == p {
			return true
		}
	}
	return false
}

// uintArg is v as an unsigned number, when it is a non-negative msgpack int.
func uintArg(v any) (uint64, bool) {
	switch n := v.(type) {
	case uint64:
		return n, true
	case int64:
		return uint64(n), n >= 0
	}
	return 0, false
}

// answerPath writes a position in an answer (map keys and indexes) in the
// path syntax of docs/SPEC.md §6, without the leading dot; messages[k] is
// numbered in the whole prompt, after base messages (an add_step answer
// holds only its step's).
func answerPath(v, base any) (string, bool) {
	segs, ok := v.([]any)
	if !ok && v != nil {
		return "", false
	}
	b, _ := uintArg(base)
	var path string
	for i, s := range segs {
		switch s := s.(type) {
		case string:
			path += fieldSeg(s)
		default:
			n, ok := uintArg(s)
			if !ok {
				return "", false
			}
			if i == 1 && segs[0] == "messages" {
				n += b
			}
			path += indexSeg(int(n))
		}
	}
	if len(path) > 0 && path[0] == '.' {
		path = path[1:]
	}
	return path, true
}
