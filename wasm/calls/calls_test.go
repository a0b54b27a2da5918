package calls_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wasm/calls"
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
	case abi.AnswerView:
		resp, view, serr := core.SplitViewAnswer(ans)
		if serr != nil {
			t.Fatalf("not a view answer: %v", serr)
		}
		if _, err = core.DecodeResponse(resp); err == nil && view == nil {
			t.Fatal("an ok view answer without its view")
		}
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
		if int(n) != len(ans)-4 || !bytes.Equal(ans[4:], calls.Append(abi.CallAssemble, nil, request())) {
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
		ans := calls.Append(c.Op, []byte("kept"), good[c.Arg])
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
		bad := calls.Append(c.Op, nil, []byte{0xc1})
		e := answerError(t, c.Answer, bad)
		if e == nil {
			t.Fatalf("%s: 0xc1 is ok", c.Name)
		}
		if e.Offset == 0 && c.Answer == abi.AnswerJSON {
			e.Offset = -1 // JSON leaves it out
		}
		if want := core.AppendErrorAnswer(nil, c.Op, e); !bytes.Equal(bad, want) {
			t.Errorf("%s: its error answer is %q, the core's for it %q", c.Name, bad, want)
		}
	}
}

// TestUnknownCall: a number past the table is an internal error.
func TestUnknownCall(t *testing.T) {
	_, err := core.DecodeResponse(calls.Append(abi.NumCalls, nil, request()))
	if e, ok := err.(*core.Error); !ok || e.Code != core.CodeInternal || e.Message != calls.MsgUnknownCall {
		t.Errorf("got %v", err)
	}
}
