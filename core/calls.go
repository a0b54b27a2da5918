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
	NumCalls                         // the number of calls
)

// Name is the call's name: the names of the module's exports before the
// one-crossing ABI, and the words the docs and error messages use.
func (c Call) Name() string {
	if c >= NumCalls {
		return "call"
	}
	return [...]string{"assemble", "assemble_json", "add_step", "assemble_view", "assemble_view_json", "prompt_start", "compare"}[c]
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
