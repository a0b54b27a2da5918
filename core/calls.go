package core

// Call numbers one of the module's calls: the op argument of its call export
// (wasm/README.md, "ABI"). Hosts get the numbers from the generated constants
// (CALL_* in the bindings); the order is fixed, a new call is added at the end.
type Call uint32

const (
	CallAssemble         Call = iota // a msgpack request (AppendAssembleBytes)
	CallAssembleJSON                 // a request as JSON text (wirejson.AppendAssemble)
	CallAddStep                      // a msgpack add_step request (AppendAddStepBytes)
	CallAssembleView                 // a msgpack request, answered with its view (AppendAssembleViewBytes)
	CallAssembleViewJSON             // the same for JSON text (wirejson.AppendAssembleView)
	CallPromptStart                  // a msgpack request, answered with the start of a prompt (AppendPromptStartBytes)
	CallCompare                      // a msgpack compare request, answered with JSON text (wirejson.AppendCompare)
	CallBatch                        // several calls in one crossing (AppendBatch)
	NumCalls                         // the number of calls
)

// Name is the call's name: the names of the module's exports before the
// one-crossing ABI, and the words the docs and error messages use.
func (c Call) Name() string {
	if c >= NumCalls {
		return "call"
	}
	return [...]string{"assemble", "assemble_json", "add_step", "assemble_view", "assemble_view_json", "prompt_start", "compare", "batch"}[c]
}

// AppendCallError appends the answer of call c to a request it could not
// read (an unknown call, a size past the request buffer): an internal error
// in the shape of c's answer (an error response, an error view, or a
// comparison's JSON error).
func AppendCallError(dst []byte, c Call, msg string) []byte {
	e := &Error{Code: CodeInternal, Message: msg, Offset: -1}
	switch c {
	case CallAssembleView, CallAssembleViewJSON:
		return AppendErrorView(dst, e)
	case CallCompare:
		return AppendCompareError(dst, e)
	}
	return append(dst, InternalErrorResponse(msg)...)
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
func AppendBatch(dst, req []byte, run func(c Call, dst, req []byte) []byte) []byte {
	for len(req) > 0 {
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var c Call
		var size uint32
		if len(req) >= 4 {
			c = Call(le32(req))
		}
		if len(req) >= 8 {
			size = le32(req[4:])
		}
		switch {
		case len(req) < 8 || uint64(size) > uint64(len(req)-8):
			dst = AppendCallError(dst, c, "batch: an item is cut short (its op and size, or fewer bytes than its size)")
			req = nil
		case c >= CallBatch:
			dst = AppendCallError(dst, CallAssemble, "batch: an item's op is a batch or unknown")
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
