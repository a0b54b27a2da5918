//go:build !wasip1

package core_test

// The answers read as views (core.SplitViewAnswer is the hosts', not the
// module's: these tests run natively, not in the wasip1 build of core's tests).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// TestAppendErrorAnswer: the error answer of each call is what the hosts'
// decoders of that call's answer read as the error (a response, a view
// answer, a comparison's JSON), with its code, path and message.
func TestAppendErrorAnswer(t *testing.T) {
	e := &core.Error{Code: core.CodeInternal, Message: "the module trapped", Detail: "wazero: trap", Offset: -1}
	for _, c := range abi.Calls {
		ans := core.AppendErrorAnswer([]byte("kept"), c.Op, e)
		if !bytes.HasPrefix(ans, []byte("kept")) {
			t.Fatalf("%s: dst's bytes not kept", c.Name)
		}
		ans = ans[4:]
		var err error
		switch c.Answer {
		case abi.AnswerView:
			resp, view, serr := core.SplitViewAnswer(ans)
			if serr != nil || view != nil {
				t.Fatalf("%s: %v, view %v", c.Name, serr, view)
			}
			_, err = core.DecodeResponse(resp)
		case abi.AnswerJSON, abi.AnswerMap:
			text := ans
			if c.Answer == abi.AnswerMap {
				text, _, _ = wirejson.FromMsgpack(nil, ans)
			}
			var j struct{ Error *core.Error }
			if jerr := json.Unmarshal(text, &j); jerr != nil || j.Error == nil {
				t.Fatalf("%s: %q: %v", c.Name, ans, jerr)
			}
			err = j.Error
		case abi.AnswerStep:
			_, err = core.DecodeStepResponse(ans)
		case abi.AnswerPromptStart:
			_, _, err = core.DecodePromptStart(ans)
		default:
			_, err = core.DecodeResponse(ans)
		}
		if got, ok := err.(*core.Error); !ok || got.Code != e.Code || got.Path != "" || got.Message != e.Message {
			t.Errorf("%s: the error answer reads as %v", c.Name, err)
		}
		if !core.IsAnswer(c.Op, ans) {
			t.Errorf("%s: IsAnswer refuses its error answer %q", c.Name, ans)
		}
	}
}

// TestAppendRequestTooLarge: a host that knows only a request's size gets
// the answer the core gives a request of that size.
func TestAppendRequestTooLarge(t *testing.T) {
	n := int64(abi.MaxRequestBytes) + 1
	want := fmt.Sprintf("the request is %d bytes, over the 1 GiB limit; split it into smaller requests", n)
	_, err := core.DecodeResponse(core.AppendRequestTooLarge(nil, abi.CallAssemble, n))
	if e, ok := err.(*core.Error); !ok || e.Code != core.CodeTooLarge || e.Path != "" || e.Message != want {
		t.Errorf("assemble: %v", err)
	}
	_, _, err = core.SplitViewAnswer(core.AppendRequestTooLarge(nil, abi.CallAssembleView, n))
	if err != nil {
		t.Errorf("assemble_view: %v", err)
	}
}

// TestIsAnswerRefuses: bytes that are not an answer of the call, an
// answer of another shape, and answers cut short, fail the check.
