package core

import (
	"errors"
	"maps"
	"slices"

	"github.com/polyloop/assembly/core/msgp"
)

// EncodeRequest returns the canonical wire encoding of req (keys in docs/SPEC.md table
// order, channels in code-point order, shortest headers). Sandboxed hosts use
// it to offer the typed API over the wire function, and the native typed API
// checks requests by decoding it (check.go). It does not validate req. A nil
// req encodes as no bytes.
func EncodeRequest(req *Request) []byte {
	if req == nil {
		return nil // no request: every host answers it malformed_request, as Assemble(nil)
	}
	n := 2
	if req.MaxPromptChars != nil {
		n = 3
	}
	fields := []bool{len(req.RunMessages) > 0, len(req.Injections) > 0, len(req.GoalMessages) > 0, len(req.Steps) > 0}
	for _, f := range fields {
		if f {
			n++
		}
	}
	b := msgp.AppendMapHeader(nil, uint32(n))
	b = msgp.AppendString(b, "v")
	b = msgp.AppendInt64(b, WireVersion)
	if fields[0] {
		b = appendMessages(b, "run_messages", req.RunMessages)
	}
	if fields[1] {
		b = appendInjections(b, req.Injections)
	}
	if fields[2] {
		b = appendMessages(b, "goal_messages", req.GoalMessages)
	}
	if fields[3] {
		b = msgp.AppendString(b, "steps")
		b = msgp.AppendArrayHeader(b, uint32(len(req.Steps)))
		for _, s := range req.Steps {
			b = appendStep(b, s)
		}
	}
	b = msgp.AppendString(b, "observation_template")
	b = msgp.AppendString(b, req.ObservationTemplate)
	if req.MaxPromptChars != nil {
		b = msgp.AppendString(b, "max_prompt_chars")
		b = appendInt(b, *req.MaxPromptChars)
	}
	return b
}

// appendInt appends v in its shortest msgpack form (a uint when v ≥ 0, as
// the canonical encoding has it; msgp.AppendInt64 writes 200 as an int16).
func appendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return msgp.AppendUint64(b, uint64(v))
	}
	return msgp.AppendInt64(b, v)
}

// appendMessages appends the field key with its array of messages.
func appendMessages(b []byte, key string, msgs []Message) []byte {
	b = msgp.AppendString(b, key)
	b = msgp.AppendArrayHeader(b, uint32(len(msgs)))
	for _, m := range msgs {
		b = msgp.AppendMapHeader(b, 2)
		b = msgp.AppendString(b, "role")
		b = msgp.AppendString(b, m.Role)
		b = msgp.AppendString(b, "content")
		b = msgp.AppendArrayHeader(b, uint32(len(m.Content)))
		for _, blk := range m.Content {
			b = appendPair(b, "type", blk.Type, "text", blk.Text)
		}
	}
	return b
}

// appendInjections appends the injections field, channels in code-point
// order.
func appendInjections(b []byte, inj map[string][]Injection) []byte {
	b = msgp.AppendString(b, "injections")
	b = msgp.AppendMapHeader(b, uint32(len(inj)))
	for _, ch := range slices.Sorted(maps.Keys(inj)) {
		b = msgp.AppendString(b, ch)
		entries := inj[ch]
		b = msgp.AppendArrayHeader(b, uint32(len(entries)))
		for _, e := range entries {
			b = appendPair(b, "entry_id", e.EntryID, "content", e.Content)
		}
	}
	return b
}

// appendStep appends the canonical encoding of one step.
func appendStep(b []byte, s Step) []byte {
	return appendPair(b, "raw_output", s.RawOutput, "observation", s.Observation)
}

// appendPair appends a map of two str fields, k1: v1 and k2: v2.
func appendPair(b []byte, k1, v1, k2, v2 string) []byte {
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, k1)
	b = msgp.AppendString(b, v1)
	b = msgp.AppendString(b, k2)
	return msgp.AppendString(b, v2)
}

// EncodeAddStepRequest returns the canonical add_step request
// (docs/SPEC.md §7.3.1): step s appended to the prompt st of template and
// budget. Sandboxed hosts send it to the module's add_step export. It does
// not validate its arguments.
func EncodeAddStepRequest(template string, budget *int64, st PromptState, s Step) []byte {
	n := uint32(4)
	if budget != nil {
		n = 5
	}
	b := msgp.AppendMapHeader(nil, n)
	b = msgp.AppendString(b, "v")
	b = msgp.AppendInt64(b, WireVersion)
	b = msgp.AppendString(b, "observation_template")
	b = msgp.AppendString(b, template)
	if budget != nil {
		b = msgp.AppendString(b, "max_prompt_chars")
		b = msgp.AppendInt64(b, *budget)
	}
	b = msgp.AppendString(b, "prompt")
	b = msgp.AppendMapHeader(b, uint32(len(promptNames)))
	for i, v := range st.values() {
		b = msgp.AppendString(b, promptNames[i])
		b = appendInt(b, v)
	}
	b = msgp.AppendString(b, "step")
	return appendStep(b, s)
}

var promptNames = [...]string{"steps", "messages", "prompt_chars", "response_bytes", "request_bytes"}

// values are the numbers of st in the order of promptNames.
func (st PromptState) values() [len(promptNames)]int64 {
	return [...]int64{int64(st.Steps), int64(st.Messages), st.PromptChars, int64(st.ResponseBytes), int64(st.RequestBytes)}
}

// state is the PromptState of a decoded prompt map (d notes what is missing).
func (d *respDecoder) state(p map[string]any) PromptState {
	return PromptState{Steps: int(d.num(p["steps"])), Messages: int(d.num(p["messages"])), PromptChars: d.num(p["prompt_chars"]),
		ResponseBytes: int(d.num(p["response_bytes"])), RequestBytes: int(d.num(p["request_bytes"]))}
}

// StepResponse is an ok add_step response (docs/SPEC.md §7.3.1): the step's
// two messages and the prompt after it.
type StepResponse struct {
	Messages        []Message
	MessageChars    []int64
	Prompt          PromptState
	ContextOverflow bool
}

// DecodeStepResponse decodes an add_step response. An error response is
// returned as an *Error, as DecodeResponse returns it; bytes that are not an
// add_step response give ErrBadResponse.
func DecodeStepResponse(b []byte) (*StepResponse, error) {
	m, err := okMap(b)
	if err != nil {
		return nil, err
	}
	var d respDecoder
	r := &StepResponse{Messages: d.messages(m["messages"]), MessageChars: d.nums(m["message_chars"])}
	r.Prompt = d.state(d.obj(m["prompt"]))
	r.ContextOverflow = d.bool(m["context_overflow"])
	if d.bad {
		return nil, ErrBadResponse
	}
	return r, nil
}

// DecodePromptStart decodes a prompt_start response (docs/SPEC.md §7.3.1):
// the assemble response and the prompt state it starts. An error response
// is returned as an *Error, as DecodeResponse returns it.
func DecodePromptStart(b []byte) (*Response, PromptState, error) {
	m, err := okMap(b)
	if err != nil {
		return nil, PromptState{}, err
	}
	var d respDecoder
	r := d.response(m)
	st := d.state(d.obj(m["prompt"]))
	if d.bad {
		return nil, PromptState{}, ErrBadResponse
	}
	return r, st, nil
}

// PromptSegments reads the segments of an ok prompt_start response
// (docs/SPEC.md §7.3.1): where the prompt's run, injections and goal end.
func PromptSegments(b []byte) (Segments, error) {
	m, err := okMap(b)
	if err != nil {
		return Segments{}, err
	}
	var d respDecoder
	s := d.obj(m["segments"])
	seg := Segments{int(d.num(s["run_end"])), int(d.num(s["injections_end"])), int(d.num(s["goal_end"]))}
	if d.bad {
		return Segments{}, ErrBadResponse
	}
	return seg, nil
}

// ErrBadResponse reports bytes that are not a response of wire version 1.
var ErrBadResponse = errors.New("not a wire v1 response")

// DecodeResponse decodes a wire response. An error response is returned as an
// *Error whose Offset is the response's offset (an invalid_template error), or
// -1; bytes that are not a response give ErrBadResponse.
func DecodeResponse(b []byte) (*Response, error) {
	m, err := okMap(b)
	if err != nil {
		return nil, err
	}
	var d respDecoder
	r := d.response(m)
	if d.bad {
		return nil, ErrBadResponse
	}
	return r, nil
}

// okMap reads a wire v1 response as a generic map: the map of an ok
// response, the *Error of an error response, or ErrBadResponse.
func okMap(b []byte) (map[string]any, error) {
	v, rest, err := msgp.ReadIntfBytes(b)
	if err != nil || len(rest) != 0 {
		return nil, ErrBadResponse
	}
	m, ok := v.(map[string]any)
	if !ok || m["v"] != int64(1) {
		return nil, ErrBadResponse
	}
	if m["ok"] == false {
		return nil, errorOf(m)
	}
	return m, nil
}

// errorOf returns the *Error of an error response, or
// ErrBadResponse.
func errorOf(m map[string]any) error {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	path, _ := e["path"].(string)
	msg, _ := e["message"].(string)
	if code == "" {
		return ErrBadResponse
	}
	offset := -1
	switch n := e["offset"].(type) {
	case int64:
		offset = int(n)
	case uint64:
		offset = int(n)
	}
	return &Error{Code: Code(code), Path: path, Message: msg, Offset: offset}
}

// respDecoder reads the generic form of an ok response; bad records any
// value of the wrong type.
type respDecoder struct{ bad bool }

func (d *respDecoder) response(m map[string]any) *Response {
	r := Response{Messages: d.messages(m["messages"]), MessageChars: d.nums(m["message_chars"]), Injected: []Injected{}}
	r.PromptChars = d.num(m["prompt_chars"])
	r.ContextOverflow = d.bool(m["context_overflow"])
	for _, x := range d.list(m["injected"]) {
		in := d.obj(x)
		r.Injected = append(r.Injected, Injected{Channel: d.str(in["channel"]), EntryID: d.str(in["entry_id"]), MessageIndex: int(d.num(in["message_index"]))})
	}
	pd := d.obj(m["prefix_digests"])
	r.PrefixDigests = PrefixDigests{Run: d.str(pd["run"]), Injections: d.str(pd["injections"]), Goal: d.str(pd["goal"])}
	return &r
}

// messages reads an array of messages (empty, never nil).
func (d *respDecoder) messages(x any) []Message {
	msgs := []Message{}
	for _, x := range d.list(x) {
		mm := d.obj(x)
		msg := Message{Role: d.str(mm["role"]), Content: []Block{}}
		for _, y := range d.list(mm["content"]) {
			bb := d.obj(y)
			msg.Content = append(msg.Content, Block{Type: d.str(bb["type"]), Text: d.str(bb["text"])})
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// nums reads an array of ints (empty, never nil).
func (d *respDecoder) nums(x any) []int64 {
	n := []int64{}
	for _, x := range d.list(x) {
		n = append(n, d.num(x))
	}
	return n
}

func (d *respDecoder) bool(x any) bool {
	v, ok := x.(bool)
	d.bad = d.bad || !ok
	return v
}

func (d *respDecoder) str(x any) string {
	s, ok := x.(string)
	d.bad = d.bad || !ok
	return s
}

func (d *respDecoder) num(x any) int64 {
	switch n := x.(type) {
	case int64:
		return n
	case uint64:
		return int64(n)
	}
	d.bad = true
	return 0
}

func (d *respDecoder) list(x any) []any {
	l, ok := x.([]any)
	d.bad = d.bad || !ok
	return l
}

func (d *respDecoder) obj(x any) map[string]any {
	o, ok := x.(map[string]any)
	d.bad = d.bad || !ok
	return o
}
