package hosttest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wasm/dispatch"
	"github.com/polyloop/assembly/wasmhost"
	"github.com/tinylib/msgp/msgp"
)

// TestTooLargeAsksTheCore: a msgpack request over 1 GiB is not copied into
// the module; the module's error call answers it (docs/SPEC.md §7.10), as
// Python's and JS's hosts ask it. The answer is, byte for byte, the literal
// JS's pool.test.mjs writes by hand for assemble (and add_step, whose error
// is a wire response), and for every other call that takes a msgpack
// request the answer of the core's own function (run natively); and it is
// the module that answers: one that traps answers internal, not too_large.
// (The core's add_step function reads such a request as it is and answers
// malformed_request: answering it natively, as this host did, differed from
// Python, which asks the error call for too_large.)
func TestTooLargeAsksTheCore(t *testing.T) {
	big := make([]byte, abi.MaxRequestBytes+1) // lazily zeroed, never touched
	// core/check.go's message and encodeError's key order, written by hand.
	want := msgp.AppendMapHeader(nil, 3)
	want = msgp.AppendInt(msgp.AppendString(want, "v"), 1)
	want = msgp.AppendBool(msgp.AppendString(want, "ok"), false)
	want = msgp.AppendMapHeader(msgp.AppendString(want, "error"), 3)
	want = msgp.AppendString(msgp.AppendString(want, "code"), "too_large")
	want = msgp.AppendString(msgp.AppendString(want, "message"),
		"the request is 1073741825 bytes, over the 1 GiB limit; split it into smaller requests")
	want = msgp.AppendString(msgp.AppendString(want, "path"), "")
	for _, r := range runners {
		if got := r.AssembleBytes(big); !bytes.Equal(got, want) {
			t.Errorf("%s: AssembleBytes of %d bytes:\n got %q\nwant %q", r.Engine(), len(big), got, want)
		}
		n := 0
		for c := range abi.NumCalls {
			if a := abi.Calls[c].Arg; a != abi.ArgRequest && a != abi.ArgAddStep {
				continue
			}
			n++
			expect := want
			if c != abi.CallAddStep {
				expect = dispatch.Append(c, nil, big)
			}
			if got := r.AppendCall(c, nil, big); !bytes.Equal(got, expect) {
				t.Errorf("%s: %s of %d bytes:\n got %q\nwant %q", r.Engine(), c.Name(), len(big), got, expect)
			}
		}
		if n < 5 {
			t.Fatalf("only %d calls take a msgpack request", n)
		}
	}
	trap := stubModule(0x00, 0x0b) // unreachable
	for _, k := range runnerKinds {
		r, err := k.new(wasmhost.Options{Module: trap, CacheDir: "-", MaxInstances: 1})
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		_, err = core.DecodeResponse(r.AssembleBytes(big))
		var e *core.Error
		if !errors.As(err, &e) || e.Code != core.CodeInternal || e.Message != abi.MsgTrapped {
			t.Errorf("%s: a module that traps answers a request over 1 GiB with %v, want internal %q", k.name, err, abi.MsgTrapped)
		}
		r.Close()
	}
}
