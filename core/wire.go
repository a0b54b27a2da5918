package core

import (
	"errors"
	"maps"
	"slices"

	"github.com/tinylib/msgp/msgp"
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
	appendMsgs := func(key string, msgs []Message) {
		b = msgp.AppendString(b, key)
		b = msgp.AppendArrayHeader(b, uint32(len(msgs)))
		for _, m := range msgs {
			b = msgp.AppendMapHeader(b, 2)
			b = msgp.AppendString(b, "role")
			b = msgp.AppendString(b, m.Role)
			b = msgp.AppendString(b, "content")
			b = msgp.AppendArrayHeader(b, uint32(len(m.Content)))
			for _, blk := range m.Content {
				b = msgp.AppendMapHeader(b, 2)
				b = msgp.AppendString(b, "type")
				b = msgp.AppendString(b, blk.Type)
				b = msgp.AppendString(b, "text")
				b = msgp.AppendString(b, blk.Text)
			}
		}
	}
	if fields[0] {
		appendMsgs("run_messages", req.RunMessages)
	}
	if fields[1] {
		b = msgp.AppendString(b, "injections")
		b = msgp.AppendMapHeader(b, uint32(len(req.Injections)))
		for _, ch := range slices.Sorted(maps.Keys(req.Injections)) {
			b = msgp.AppendString(b, ch)
			entries := req.Injections[ch]
			b = msgp.AppendArrayHeader(b, uint32(len(entries)))
			for _, e := range entries {
				b = msgp.AppendMapHeader(b, 2)
				b = msgp.AppendString(b, "entry_id")
				b = msgp.AppendString(b, e.EntryID)
				b = msgp.AppendString(b, "content")
				b = msgp.AppendString(b, e.Content)
			}
		}
	}
	if fields[2] {
		appendMsgs("goal_messages", req.GoalMessages)
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
		b = msgp.AppendInt64(b, *req.MaxPromptChars)
	}
	return b
}

// appendStep appends the canonical encoding of one step.
func appendStep(b []byte, s Step) []byte {
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "raw_output")
	b = msgp.AppendString(b, s.RawOutput)
	b = msgp.AppendString(b, "observation")
	return msgp.AppendString(b, s.Observation)
}

// ErrBadResponse reports bytes that are not a response of wire version 1.
var ErrBadResponse = errors.New("not a wire v1 response")

// DecodeResponse decodes a wire response. An error response is returned as an
// *Error whose Offset is the response's offset (an invalid_template error), or
// -1; bytes that are not a response give ErrBadResponse.
func DecodeResponse(b []byte) (*Response, error) {
	v, rest, err := msgp.ReadIntfBytes(b)
	if err != nil || len(rest) != 0 {
		return nil, ErrBadResponse
	}
	m, ok := v.(map[string]any)
	if !ok || m["v"] != int64(1) {
		return nil, ErrBadResponse
	}
	if m["ok"] == false {
		e, _ := m["error"].(map[string]any)
		code, _ := e["code"].(string)
		path, _ := e["path"].(string)
		msg, _ := e["message"].(string)
		if code == "" {
			return nil, ErrBadResponse
		}
		offset := -1
		switch n := e["offset"].(type) {
		case int64:
			offset = int(n)
		case uint64:
			offset = int(n)
		}
		return nil, &Error{Code: Code(code), Path: path, Message: msg, Offset: offset}
	}
	r := Response{Messages: []Message{}, MessageChars: []int64{}, Injected: []Injected{}}
	bad := false
	str := func(x any) string {
		s, ok := x.(string)
		bad = bad || !ok
		return s
	}
	num := func(x any) int64 {
		switch n := x.(type) {
		case int64:
			return n
		case uint64:
			return int64(n)
		}
		bad = true
		return 0
	}
	list := func(x any) []any {
		l, ok := x.([]any)
		bad = bad || !ok
		return l
	}
	obj := func(x any) map[string]any {
		o, ok := x.(map[string]any)
		bad = bad || !ok
		return o
	}
	for _, x := range list(m["messages"]) {
		mm := obj(x)
		msg := Message{Role: str(mm["role"]), Content: []Block{}}
		for _, y := range list(mm["content"]) {
			bb := obj(y)
			msg.Content = append(msg.Content, Block{Type: str(bb["type"]), Text: str(bb["text"])})
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, x := range list(m["message_chars"]) {
		r.MessageChars = append(r.MessageChars, num(x))
	}
	r.PromptChars = num(m["prompt_chars"])
	r.ContextOverflow, ok = m["context_overflow"].(bool)
	bad = bad || !ok
	for _, x := range list(m["injected"]) {
		in := obj(x)
		r.Injected = append(r.Injected, Injected{Channel: str(in["channel"]), EntryID: str(in["entry_id"]), MessageIndex: int(num(in["message_index"]))})
	}
	d := obj(m["prefix_digests"])
	r.PrefixDigests = PrefixDigests{Run: str(d["run"]), Injections: str(d["injections"]), Goal: str(d["goal"])}
	if bad {
		return nil, ErrBadResponse
	}
	return &r, nil
}
