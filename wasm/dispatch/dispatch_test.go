package dispatch_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wasm/dispatch"
	"github.com/polyloop/assembly/wirejson"
)

// text is the sample request as JSON text; request is the same request as
// msgpack, written with the msgp library (not the JSON layer under test).
const text = `{"observation_template": "{observation}", "steps": [{"raw_output": "r", "observation": "o"}]}`

func request() []byte {
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendString(msgp.AppendString(b, "observation_template"), "{observation}")
	b = msgp.AppendArrayHeader(msgp.AppendString(b, "steps"), 1)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(msgp.AppendString(b, "raw_output"), "r")
	return msgp.AppendString(msgp.AppendString(b, "observation"), "o")
}

// samples is a good request of each request shape (abi.Arg).
func samples(t *testing.T) [abi.NumArgs][]byte {
	t.Helper()
	_, st, err := core.DecodePromptStart(core.PromptStartBytes(request()))
	if err != nil {
		t.Fatal(err)
	}
	cmp := msgp.AppendMapHeader(nil, 2)
	cmp = msgp.AppendString(msgp.AppendString(cmp, "a"), text)
	cmp = msgp.AppendBytes(msgp.AppendString(cmp, "b"), request())
	item := binary.LittleEndian.AppendUint32(nil, uint32(abi.CallAssemble))
	item = binary.LittleEndian.AppendUint32(item, uint32(len(request())))
	return [abi.NumArgs][]byte{
		abi.ArgRequest: request(),
		abi.ArgJSON:    []byte(text),
		abi.ArgAddStep: core.EncodeAddStepRequest("{observation}", nil, st, core.Step{RawOutput: "r2", Observation: "o2"}),
		abi.ArgCompare: cmp,
		abi.ArgBatch:   append(item, request()...),
		abi.ArgArgs:    errorRequest(abi.CallAssemble, "trapped", 0, nil, 0),
	}
}

// answerError reads ans as the hosts read an answer of the shape kind and
// returns its error (nil for an ok answer), or fails t if it does not read.
func answerError(t *testing.T, kind abi.Answer, ans []byte) *core.Error {
	t.Helper()
	var err error
	switch kind {
	case abi.AnswerResponse:
		_, err = core.DecodeResponse(ans)
	case abi.AnswerPromptStart:
		_, _, err = core.DecodePromptStart(ans)
	case abi.AnswerStep:
		_, err = core.DecodeStepResponse(ans)
	case abi.AnswerShared: // its texts: core's TestSharedTexts
		if !core.ResponseOK(ans) {
			_, err = core.DecodeResponse(ans)
		}
	case abi.AnswerView:
		resp, view, serr := core.SplitViewAnswer(ans)
		if serr != nil {
			t.Fatalf("not a view answer: %v", serr)
		}
		if _, err = core.DecodeResponse(resp); err == nil && view == nil {
			t.Fatal("an ok view answer without its view")
		}
	case abi.AnswerMap: // read as the JSON it converts to
		ans, _, _ = wirejson.FromMsgpack(nil, ans)
		fallthrough
	case abi.AnswerJSON:
		var j struct{ Error *core.Error }
		if jerr := json.Unmarshal(ans, &j); jerr != nil {
			t.Fatalf("not JSON: %v: %q", jerr, ans)
		}
		if j.Error != nil {
			err = j.Error
		}
	case abi.AnswerBatch:
		n := binary.LittleEndian.Uint32(ans)
		if int(n) != len(ans)-4 || !bytes.Equal(ans[4:], dispatch.Append(abi.CallAssemble, nil, request())) {
			t.Fatalf("not the one item's answer: %q", ans)
		}
	}
	if err == nil {
		return nil
	}
	e, ok := err.(*core.Error)
	if !ok {
		t.Fatalf("not an answer of its shape: %v", err)
	}
	return e
}

// TestEveryCallHasItsFunction holds the contract's table and the functions
// together: every row's function answers a good request of the row's
// request shape with an ok answer of the row's answer shape (read by the
// hosts' decoders of that shape, and passing core.IsAnswer), keeps dst's
// bytes, and answers a request it cannot read with the error answer the
// core makes for that call (core.AppendErrorAnswer), the one a host makes
// when the module fails.
func TestEveryCallHasItsFunction(t *testing.T) {
	good := samples(t)
	for _, c := range abi.Calls {
		if c.Answer == abi.AnswerNamed {
			continue // the error call: TestErrorCall
		}
		sample := good[c.Arg]
		if c.Arg == abi.ArgArgs {
			sample = argSamples[c.Op]
		}
		ans := dispatch.Append(c.Op, []byte("kept"), sample)
		if !bytes.HasPrefix(ans, []byte("kept")) {
			t.Fatalf("%s: dst's bytes not kept", c.Name)
		}
		if e := answerError(t, c.Answer, ans[4:]); e != nil {
			t.Errorf("%s (%s): %v", c.Name, c.Arg, e)
		}
		if !core.IsAnswer(c.Op, ans[4:]) {
			t.Errorf("%s: IsAnswer refuses its answer", c.Name)
		}
		if c.Arg == abi.ArgBatch {
			continue // a batch item's answer is its call's
		}
		bad := dispatch.Append(c.Op, nil, []byte{0xc1})
		e := answerError(t, c.Answer, bad)
		if e == nil {
			t.Fatalf("%s: 0xc1 is ok", c.Name)
		}
		if e.Offset == 0 && (c.Answer == abi.AnswerJSON || c.Answer == abi.AnswerMap) {
			e.Offset = -1 // JSON leaves it out
		}
		want := core.AppendErrorAnswer(nil, c.Op, e)
		if c.Answer == abi.AnswerView && c.Arg == abi.ArgJSON {
			// A JSON syntax error's view also says its byte (the core's
			// own error answer has no text to say it of).
			want = bytes.Replace(want, []byte(`"syntax_byte":null`), []byte(`"syntax_byte":0`), 1)
		}
		if !bytes.Equal(bad, want) {
			t.Errorf("%s: its error answer is %q, the core's for it %q", c.Name, bad, want)
		}
	}
}

// TestUnknownCall: a number past the table is an internal error.
func TestUnknownCall(t *testing.T) {
	_, err := core.DecodeResponse(dispatch.Append(abi.NumCalls, nil, request()))
	if e, ok := err.(*core.Error); !ok || e.Code != core.CodeInternal || e.Message != dispatch.MsgUnknownCall {
		t.Errorf("got %v", err)
	}
}

// argSamples are good requests of the calls whose request is a map of
// arguments, packed with the msgp library.
var argSamples = map[abi.Call][]byte{

	abi.CallCacheReport: func() []byte {
		b := msgp.AppendArrayHeader(msgp.AppendString(msgp.AppendMapHeader(nil, 2), "requests"), 2)
		b = append(append(b, request()...), request()...)
		return msgp.AppendNil(msgp.AppendString(b, "usage"))
	}(),
	abi.CallExport: func() []byte {
		b := append(msgp.AppendString(msgp.AppendMapHeader(nil, 3), "request"), request()...)
		b = msgp.AppendString(msgp.AppendString(b, "provider"), "anthropic")
		return msgp.AppendNil(msgp.AppendString(b, "options"))
	}(),
	abi.CallCacheCall: func() []byte {
		b := msgp.AppendNil(msgp.AppendString(msgp.AppendMapHeader(nil, 4), "run"))
		b = append(msgp.AppendString(b, "prompt"), request()...)
		b = msgp.AppendNil(msgp.AppendString(b, "previous"))
		return msgp.AppendNil(msgp.AppendString(b, "usage"))
	}(),
}

// errorRequest is an error call's request, packed with the msgp library.
func errorRequest(c abi.Call, kind string, size int64, path []any, base int) []byte {
	b := msgp.AppendMapHeader(nil, 5)
	b = msgp.AppendUint32(msgp.AppendString(b, "call"), uint32(c))
	b = msgp.AppendString(msgp.AppendString(b, "error"), kind)
	b = msgp.AppendInt64(msgp.AppendString(b, "size"), size)
	b = msgp.AppendInt(msgp.AppendString(b, "message_base"), base)
	b, err := msgp.AppendIntf(msgp.AppendString(b, "path"), path)
	if err != nil {
		panic(err)
	}
	return b
}

// TestErrorCall: the error call answers, in the shape of every call it
// names, the error a host saw, with the texts of docs/SPEC.md §6 and §7.10
// written out here (not the core's formats) and a position in the answer
// written as a path; what it cannot read is an internal error.
func TestErrorCall(t *testing.T) {
	cases := []struct {
		kind     string
		size     int64
		path     []any
		base     int
		code, at string
		message  string
	}{
		{"too_large", 1 << 31, nil, 0, "too_large", "",
			"the request is 2147483648 bytes, over the 1 GiB limit; split it into smaller requests"},
		{"trapped", 0, nil, 0, "internal", "",
			"the assembly module trapped; the instance was discarded and the next call gets a fresh one"},
		{"out_of_memory", 0, nil, 0, "internal", "",
			"the assembly module ran out of memory; the instance was discarded and the next call gets a fresh one"},
		{"not_a_response", 0, nil, 0, "internal", "",
			"the assembly module returned bytes that are not a response; is the module from the same release as this binding?"},
		{"string_ceiling", 600 << 20, []any{"messages", 3, "content", 0, "text"}, 2, "too_large", "messages[5].content[0].text",
			"the response holds a string of 629145600 UTF-8 bytes at messages[5].content[0].text, longer than this JavaScript engine's strings allow (V8: 536870888 UTF-16 units); assembleBytes() still returns the response bytes"},
		{"string_ceiling", 9, []any{"prefix_digests", "a b", 1}, 0, "too_large", `prefix_digests["a b"][1]`,
			`the response holds a string of 9 UTF-8 bytes at prefix_digests["a b"][1], longer than this JavaScript engine's strings allow (V8: 536870888 UTF-16 units); assembleBytes() still returns the response bytes`},
		{"string_ceiling", 9, []any{}, 0, "too_large", "",
			"the response holds a string of 9 UTF-8 bytes at the top, longer than this JavaScript engine's strings allow (V8: 536870888 UTF-16 units); assembleBytes() still returns the response bytes"},
		{"no_such_error", 0, nil, 0, "internal", "",
			"error call: error is not one of the host errors (is the binding from the same release as the module?)"},
		{"string_ceiling", 9, []any{"messages", -1}, 0, "internal", "",
			"error call: path is not an array of map keys and indexes (is the binding from the same release as the module?)"},
	}
	for _, named := range abi.Calls {
		if named.Answer == abi.AnswerBatch || named.Answer == abi.AnswerNamed {
			continue
		}
		for _, tc := range cases {
			ans := dispatch.Append(abi.CallError, nil, errorRequest(named.Op, tc.kind, tc.size, tc.path, tc.base))
			e := answerError(t, named.Answer, ans)
			if e == nil || string(e.Code) != tc.code || e.Path != tc.at || e.Message != tc.message {
				t.Errorf("%s, %s: got %+v", named.Name, tc.kind, e)
			}
			if !core.IsAnswer(named.Op, ans) {
				t.Errorf("%s, %s: IsAnswer refuses it", named.Name, tc.kind)
			}
		}
	}
	for _, bad := range [][]byte{{0xc1}, msgp.AppendArrayHeader(nil, 0), errorRequest(abi.NumCalls, "trapped", 0, nil, 0),
		append(errorRequest(abi.CallAssemble, "trapped", 0, nil, 0)[:0:0], 0x81, 0xa1, 'x', 0x01)} {
		e := answerError(t, abi.AnswerResponse, dispatch.Append(abi.CallError, nil, bad))
		if e == nil || e.Code != core.CodeInternal || !strings.HasPrefix(e.Message, "error call: ") {
			t.Errorf("%x: got %+v", bad, e)
		}
	}
}

// TestWordsByOp: an op's vocabulary bits give that call's messages in
// Python's words, batch items included, and the next plain call the
// wire's again; an unknown vocabulary is an internal error.
func TestWordsByOp(t *testing.T) {
	bad := msgp.AppendArrayHeader(nil, 0) // a list, not a request
	python := abi.CallAssemble | 1<<abi.WordsShift
	message := func(ans []byte) string {
		_, err := core.DecodeResponse(ans)
		e, _ := err.(*core.Error)
		if e == nil {
			t.Fatalf("no error: %q", ans)
		}
		return e.Message
	}
	if got := message(dispatch.Append(python, nil, bad)); got != "the request must be a dict, found a list" {
		t.Errorf("python words: %q", got)
	}
	if got := message(dispatch.Append(abi.CallAssemble, nil, bad)); got != "the request must be a msgpack map, found an array" {
		t.Errorf("wire words after: %q", got)
	}
	item := binary.LittleEndian.AppendUint32(nil, uint32(python))
	item = append(binary.LittleEndian.AppendUint32(item, uint32(len(bad))), bad...)
	ans := dispatch.Append(abi.CallBatch, nil, item)
	if got := message(ans[4:]); got != "the request must be a dict, found a list" {
		t.Errorf("a batch item's words: %q", got)
	}
	if got := message(dispatch.Append(abi.CallAssemble|9<<abi.WordsShift, nil, bad)); !strings.Contains(got, "unknown vocabulary 9") {
		t.Errorf("unknown vocabulary: %q", got)
	}
}
