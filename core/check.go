package core

import "strconv"

// The typed entry points (Assemble, NewPrompt, Prompt.AddStep,
// ValidateTemplate) check their input with the wire decoder itself: the
// request is encoded (EncodeRequest, the encoding every sandboxed host sends)
// and decoded by the code AssembleBytes runs, so a typed request gets the
// same error code, path, message and offset on every host, and the rules of
// docs/SPEC.md §2 are written once.

// checkRequest checks req as AssembleBytes checks its encoding and returns
// the parsed template.
func checkRequest(req *Request) (*Template, *Error) {
	b := EncodeRequest(req) // a nil req: no bytes, malformed_request as on the wire
	if err := checkRequestSize(len(b)); err != nil {
		return nil, err
	}
	sc := getScratch()
	defer sc.release()
	_, tmpl, _, err := decodeRequestCounted(b, sc)
	return tmpl, err
}

// checkRequestSize is too_large for a request of more than MaxRequestBytes
// (the wire function's first check, and the typed check's).
func checkRequestSize(n int) *Error {
	if n <= MaxRequestBytes {
		return nil
	}
	return newError(CodeTooLarge, "", "the request is "+strconv.Itoa(n)+" bytes, over the 1 GiB limit; split it into smaller requests")
}

// checkStep checks one step as the decoder checks steps[k] of a request.
func checkStep(s Step, k int) *Error {
	if _, _, _, _, err := decodeStep(appendStep(nil, s)); err != nil {
		return err.within("steps" + indexSeg(k))
	}
	return nil
}
