package core

// The typed entry points (Assemble, NewPrompt, Prompt.AddStep,
// ValidateTemplate) check their input with the wire decoder itself: the
// request is encoded (EncodeRequest, the encoding every sandboxed host sends)
// and decoded by the code AssembleBytes runs, so a typed request gets the
// same error code, path, message and offset on every host, and the rules of
// docs/SPEC.md §2 are written once.

// checkRequest checks req as AssembleBytes checks its encoding, decoding
// that into sc (so sc.tc holds the code points of req's texts), and returns
// the parsed template.
func checkRequest(req *Request, sc *scratch) (*Template, *Error) {
	b := EncodeRequest(req) // a nil req: no bytes, malformed_request as on the wire
	if err := checkRequestSize(len(b)); err != nil {
		return nil, err
	}
	_, tmpl, err := decodeRequest(b, sc)
	return tmpl, err
}

// checkStep checks one step as the decoder checks steps[k] of a request and
// returns the code points of its raw output and observation.
func checkStep(s Step, k int) (rawChars, obsChars int, _ *Error) {
	_, rawChars, obsChars, _, err := decodeStep(appendStep(nil, s))
	if err != nil {
		return 0, 0, err.within("steps" + indexSeg(k))
	}
	return rawChars, obsChars, nil
}
