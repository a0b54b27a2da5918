package core

import (
	"slices"

	"github.com/polyloop/assembly/core/msgfmt"
)

// The entry points of the assembly: the wire function (AssembleBytes,
// AppendAssembleBytes) and the typed one (Assemble). The work is in
// decode.go (the request), plan.go (the messages), size.go (the response
// limit), encode.go (the response) and digest.go (its prefix digests).

// AssembleBytes is the wire function of docs/SPEC.md §2-6: it decodes a msgpack
// request, assembles it and returns the canonical msgpack response, ok or
// error. It never panics (a panic is recovered into an internal error
// response) and never writes to stdout.
func AssembleBytes(request []byte) (response []byte) {
	return appendAssembleBytes(nil, request, false, nil)
}

// AppendAssembleBytes is AssembleBytes that appends the response to dst and
// returns the extended slice, for callers that reuse one buffer across calls
// (the WebAssembly module does). When dst has room for the response, it does
// not allocate for it. request must not overlap dst's spare capacity.
func AppendAssembleBytes(dst, request []byte) []byte {
	return appendAssembleBytes(dst, request, true, nil)
}

// appendAssembleBytes appends the response to dst (in a fresh buffer unless
// reuse); when view is set, it also fills *view for an ok response (the
// encoder records where each text lands) and sets view.ok.
func appendAssembleBytes(dst, request []byte, reuse bool, view *View) []byte {
	return runWire(dst, request, func(sc *scratch) ([]byte, *Error) {
		_, a, size, err := planRequest(request, sc)
		if err != nil {
			return nil, err
		}
		if !reuse {
			dst = makeNoZero(size)
		} else if cap(dst)-len(dst) < size {
			dst = slices.Grow(dst, size)
		}
		if view == nil {
			return a.appendTo(dst), nil
		}
		return a.appendView(dst, view), nil
	})
}

// planRequest decodes request and lays out its assembly: the request, the
// assembly and the exact size of its ok response, or the request's error
// (too_large when that response would pass MaxResponseBytes).
func planRequest(request []byte, sc *scratch) (*Request, *assembly, int, *Error) {
	req, tmpl, err := decodeRequest(request, sc)
	if err != nil {
		return nil, nil, 0, err
	}
	a := build(req, tmpl, sc)
	size, err := a.encodedSize()
	if err != nil {
		return nil, nil, 0, err
	}
	return req, a, size, nil
}

// runWire is the discipline of every wire function: a request over
// MaxRequestBytes is too_large before decoding; fn runs on a pooled scratch
// and returns the response, or the error whose response is appended to dst;
// a panic is recovered into an internal error response.
func runWire(dst, request []byte, fn func(sc *scratch) ([]byte, *Error)) (response []byte) {
	return runWireSlack(dst, request, 0, fn)
}

// runWireSlack is runWire with a request of up to slack bytes over
// MaxRequestBytes decoded all the same (an add_step request, whose own rule
// is the whole request's size).
func runWireSlack(dst, request []byte, slack int, fn func(sc *scratch) ([]byte, *Error)) (response []byte) {
	defer func() {
		if r := recover(); r != nil {
			response = append(dst, InternalErrorResponse("the assembler panicked; please report this request: "+panicText(r))...)
		}
	}()
	if err := checkRequestSize(len(request) - slack); err != nil {
		return append(dst, encodeError(newError(CodeTooLarge, "", msgfmt.Sprintf(MsgRequestTooLargeFormat, len(request))))...)
	}
	sc := getScratch()
	defer sc.release()
	out, err := fn(sc)
	if err != nil {
		return append(dst, encodeError(err)...)
	}
	return out
}

func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return "unknown panic value"
}

// InternalErrorResponse returns the canonical error response with code
// internal and the given message. Hosts use it for failures outside the core.
func InternalErrorResponse(msg string) []byte {
	return encodeError(newError(CodeInternal, "", msg))
}

// Assemble assembles a typed request. It checks the request with the wire
// decoder (on its canonical encoding, EncodeRequest: channels in code-point
// order), so an invalid request gets the *Error AssembleBytes would answer
// for that encoding: the same code, path, message and offset, the first
// problem in the table order of docs/SPEC.md. The check holds a copy of the request's text
// while it runs.
func Assemble(req *Request) (*Response, error) {
	sc := getScratch()
	defer sc.release()
	a, err := checkAndBuild(req, sc)
	if err != nil {
		return nil, err
	}
	return a.response()
}

// checkAndBuild checks req (checkRequest) and lays out its plan in sc, with
// the code points the check counted.
func checkAndBuild(req *Request, sc *scratch) (*assembly, *Error) {
	tmpl, err := checkRequest(req, sc)
	if err != nil {
		return nil, err
	}
	// The channels of req itself, not of its encoding the check decoded:
	// the response must not hold strings of that copy.
	sc.chans = appendChannels(sc.chans[:0], req.Injections)
	return build(req, tmpl, sc), nil
}
