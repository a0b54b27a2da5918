package hosttest

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wasm/dispatch"
)

// The calls added after compare (assemble_shared, cache_report, export,
// error) on wazero and wasmtime answer the bytes the native functions do
// (wasm/dispatch, the functions the module runs), for every vector request
// and random ones, valid and not.

func sameCall(t *testing.T, label string, c abi.Call, req []byte) {
	t.Helper()
	want := dispatch.Append(c, nil, req)
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

// TestCallArgumentCountsEveryEngine: Runner.CallArgs with a wrong number of
// arguments answers the call's malformed_request in the call's shape,
// naming the call and the counts, as core.AppendArgs says; never a panic.
func TestCallArgumentCountsEveryEngine(t *testing.T) {
	for _, r := range runners {
		for _, tc := range []struct {
			c    abi.Call
			args [][]byte
			want string
		}{
			{abi.CallExport, [][]byte{{0xc0}, {0xc0}}, "\x81\xa5error\x83\xa4code\xb1malformed_request\xa7message\xd9<export takes 3 arguments (request, provider, options), got 2\xa4path\xa0"},
			{abi.CallCacheReport, nil, `{"error":{"code":"malformed_request","message":"cache_report takes 2 arguments (requests, usage), got 0","path":""}}`},
			{abi.CallCompare, [][]byte{{0xc0}}, `{"error":{"code":"malformed_request","message":"compare takes 2 arguments (a, b), got 1","path":""}}`},
		} {
			if got := r.CallArgs(tc.c, tc.args...); string(got) != tc.want {
				t.Errorf("%s: %s with %d arguments:\n got %q\nwant %q", r.Engine(), tc.c.Name(), len(tc.args), got, tc.want)
			}
		}
		resp, err := core.DecodeResponse(r.CallArgs(abi.CallAssemble, []byte{0x80}))
		if e, ok := err.(*core.Error); resp != nil || !ok || e.Code != core.CodeMalformedRequest || !strings.Contains(e.Message, "assemble takes no map of arguments") {
			t.Errorf("%s: assemble through Call: %v", r.Engine(), err)
		}
	}
}
