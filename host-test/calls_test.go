package hosttest

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wasm/calls"
)

// The calls added after compare (assemble_shared, cache_report, export,
// error) on wazero and wasmtime answer the bytes the native functions do
// (wasm/calls, the functions the module runs), for every vector request
// and random ones, valid and not.

func sameCall(t *testing.T, label string, c abi.Call, req []byte) {
	t.Helper()
	want := calls.Append(c, nil, req)
	for _, r := range runners {
		if got := r.AppendCall(c, nil, req); !bytes.Equal(got, want) {
			t.Fatalf("%s, %s: %s differs from native:\n native: %.300q\n %s: %.300q", label, c.Name(), r.Engine(), want, r.Engine(), got)
		}
	}
}

func TestNewCallsEveryEngine(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([][]byte, 0, len(cases)+300)
	for _, c := range cases {
		reqs = append(reqs, c.Request)
	}
	r := rand.New(rand.NewPCG(2026, 35))
	for range min(randomCount(), 300) {
		reqs = append(reqs, randreq.Bytes(r))
	}
	for i, req := range reqs {
		sameCall(t, "request "+strconv.Itoa(i), abi.CallAssembleShared, req)
		for _, p := range []string{"anthropic", "openai-chat", "openai-responses"} {
			b := msgp.AppendBytes(msgp.AppendString(msgp.AppendMapHeader(nil, 3), "request"), req)
			b = msgp.AppendString(msgp.AppendString(b, "provider"), p)
			sameCall(t, "request "+strconv.Itoa(i)+" "+p, abi.CallExport, msgp.AppendNil(msgp.AppendString(b, "options")))
		}
	}
	// one report of every request in order, usage nil and recorded
	rep := msgp.AppendArrayHeader(msgp.AppendString(msgp.AppendMapHeader(nil, 2), "requests"), uint32(len(reqs)))
	usage := msgp.AppendArrayHeader(nil, uint32(len(reqs)))
	for i, req := range reqs {
		rep = msgp.AppendBytes(rep, req)
		usage = msgp.AppendMapHeader(usage, 1)
		usage = msgp.AppendInt(msgp.AppendString(usage, "cache_read_input_tokens"), i%3)
	}
	sameCall(t, "the report", abi.CallCacheReport, msgp.AppendNil(msgp.AppendString(rep, "usage")))
	sameCall(t, "the report with usage", abi.CallCacheReport, append(msgp.AppendString(rep, "usage"), usage...))
	for _, kind := range abi.HostErrors {
		for c := range abi.NumCalls {
			b := msgp.AppendMapHeader(nil, 4)
			b = msgp.AppendUint32(msgp.AppendString(b, "call"), uint32(c))
			b = msgp.AppendString(msgp.AppendString(b, "error"), kind)
			b = msgp.AppendInt(msgp.AppendString(b, "size"), 1<<31)
			b = msgp.AppendArrayHeader(msgp.AppendString(b, "path"), 2)
			b = msgp.AppendInt(msgp.AppendString(b, "messages"), 3)
			sameCall(t, kind, abi.CallError, b)
		}
	}
}
