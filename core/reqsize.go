package core

import "github.com/polyloop/assembly/core/msgfmt"

// The size of the request an incremental prompt stands for (docs/SPEC.md
// §7.3): a prompt is one assemble of its request with all its steps, so a
// step is refused with the request's too_large exactly when that request's
// canonical encoding (keys in table order, every int, str, array and map
// header in its shortest form, §6) would be over MaxRequestBytes. The
// prompt state keeps that size as request_bytes, always counting a steps
// key (a request with no steps key gains one with its first step).

// maxRequest is MaxRequestBytes; tests lower it to check the limit at the
// boundary without building 1 GiB.
var maxRequest = MaxRequestBytes

// emptyStepsSize is what a steps key with an empty array adds to a request.
var emptyStepsSize = len(keySteps) + hdrSize(0)

// requestSize is the size of the canonical encoding of req with a steps key
// (present even when req has no steps). It mirrors EncodeRequest, which
// writes the canonical encoding but leaves out an empty steps key.
func requestSize(req *Request) int {
	n := 1 + strSize(len("v")) + uintSize(WireVersion) // the map header (at most 7 keys) and v: 1
	n += strSize(len("observation_template")) + strSize(len(req.ObservationTemplate))
	if req.MaxPromptChars != nil {
		n += strSize(len("max_prompt_chars")) + intSize(*req.MaxPromptChars)
	}
	n += messagesSize("run_messages", req.RunMessages) + messagesSize("goal_messages", req.GoalMessages)
	if len(req.Injections) > 0 {
		n += strSize(len("injections")) + hdrSize(len(req.Injections))
		for ch, entries := range req.Injections {
			n += strSize(len(ch)) + hdrSize(len(entries))
			for _, e := range entries {
				n += pairSize("entry_id", e.EntryID, "content", e.Content)
			}
		}
	}
	n += len(keySteps) + hdrSize(len(req.Steps))
	for _, s := range req.Steps {
		n += stepSize(len(s.RawOutput), len(s.Observation))
	}
	return n
}

func messagesSize(key string, msgs []Message) int {
	if len(msgs) == 0 {
		return 0
	}
	n := strSize(len(key)) + hdrSize(len(msgs))
	for _, m := range msgs {
		n += 1 + strSize(len("role")) + strSize(len(m.Role)) + strSize(len("content")) + hdrSize(len(m.Content))
		for _, b := range m.Content {
			n += pairSize("type", b.Type, "text", b.Text)
		}
	}
	return n
}

// pairSize is the size of a map of two str fields.
func pairSize(k1, v1, k2, v2 string) int {
	return 1 + strSize(len(k1)) + strSize(len(v1)) + strSize(len(k2)) + strSize(len(v2))
}

// stepSize is the size of a step whose raw output and observation are raw
// and obs bytes long.
func stepSize(raw, obs int) int {
	return 1 + len(keyRawOutput) + strSize(raw) + len(keyObservation) + strSize(obs)
}

// intSize is the size of v in its shortest msgpack form.
func intSize(v int64) int {
	switch {
	case v >= 0:
		return uintSize(uint64(v))
	case v >= -32:
		return 1
	case v >= -1<<7:
		return 2
	case v >= -1<<15:
		return 3
	case v >= -1<<31:
		return 5
	}
	return 9
}

// grow is the request_bytes of the prompt st with one more step of raw and
// obs bytes, or the too_large one assemble of that whole request answers.
func (st PromptState) grow(raw, obs int) (int, *Error) {
	n := st.RequestBytes - hdrSize(st.Steps) + hdrSize(st.Steps+1) + stepSize(raw, obs)
	return n, checkRequestSize(n)
}

// RequestOverLimit reports whether a request of n bytes is over the limit
// the wire functions refuse before decoding it (MaxRequestBytes; lower while
// a test has called SetLimits). The JSON reader (wirejson) asks it
// whether a request it wrote small, past its 64th level, must be written at
// its full size.
func RequestOverLimit(n uint64) bool { return n > uint64(maxRequest) }

// checkRequestSize is too_large for a request of more than MaxRequestBytes
// (the wire function's first check, the typed check's and a prompt's).
func checkRequestSize(n int) *Error {
	if n <= maxRequest {
		return nil
	}
	return newError(CodeTooLarge, "", msgfmt.Sprintf(MsgRequestTooLargeFormat, n))
}
