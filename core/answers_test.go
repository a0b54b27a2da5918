package core_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/benchreq"
)

// item frames one batch item: op, size (both uint32 little-endian), request.
func item(op abi.Call, req []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(op))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(req)))
	return append(b, req...)
}

// answers splits a batch answer into its items' answers.
func answers(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("batch answer cut inside a length: % x", b)
		}
		n := binary.LittleEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			t.Fatalf("batch answer item of %d bytes, %d left", n, len(b)-4)
		}
		out = append(out, b[4:4+n])
		b = b[4+n:]
	}
	return out
}

// TestAppendBatch: every item's answer is what its call answers alone
// (AppendAssembleBytes, AppendAddStepBytes, ... run directly), in order,
// the empty batch has the empty answer, and a dst's bytes are kept.
func TestAppendBatch(t *testing.T) {
	direct := map[abi.Call]func(dst, req []byte) []byte{
		abi.CallAssemble: core.AppendAssembleBytes, abi.CallAddStep: core.AppendAddStepBytes,
		abi.CallPromptStart: core.AppendPromptStartBytes, abi.CallAssembleView: core.AppendAssembleViewBytes,
	}
	run := func(c abi.Call, dst, req []byte) []byte { return direct[c](dst, req) }
	reqs := []struct {
		op  abi.Call
		req []byte
	}{
		{abi.CallAssemble, tinyRequest()}, {abi.CallAssemble, []byte{0xc1}}, {abi.CallPromptStart, tinyRequest()},
		{abi.CallAssembleView, tinyRequest()}, {abi.CallAssemble, nil}, {abi.CallAddStep, []byte{0x80}},
	}
	for n := 0; n <= len(reqs); n++ {
		var batch []byte
		for _, r := range reqs[:n] {
			batch = append(batch, item(r.op, r.req)...)
		}
		got := answers(t, core.AppendBatch([]byte("kept"), batch, run)[4:])
		if len(got) != n {
			t.Fatalf("%d items: %d answers", n, len(got))
		}
		for i, r := range reqs[:n] {
			if want := direct[r.op](nil, r.req); !bytes.Equal(got[i], want) {
				t.Errorf("%d items: item %d (%s): got %q, want %q", n, i, r.op.Name(), got[i], want)
			}
		}
		if b := core.AppendBatch([]byte("kept"), batch, run); !bytes.HasPrefix(b, []byte("kept")) {
			t.Errorf("dst's bytes not kept: %q", b[:4])
		}
	}
}

// TestAppendBatchRefuses: an item cut short at every length, a batch inside
// a batch and an unknown op are answered with an internal error of the
// item's shape, after the answers of the items before it, and end the batch.
func TestAppendBatchRefuses(t *testing.T) {
	run := func(c abi.Call, dst, req []byte) []byte { return core.AppendAssembleBytes(dst, req) }
	good := item(abi.CallAssemble, tinyRequest())
	whole := item(abi.CallAssemble, tinyRequest())
	for cut := 1; cut < len(whole); cut++ {
		got := answers(t, core.AppendBatch(nil, append(append([]byte{}, good...), whole[:cut]...), run))
		if len(got) != 2 || !bytes.Equal(got[0], core.AssembleBytes(tinyRequest())) {
			t.Fatalf("cut at %d: %d answers", cut, len(got))
		}
		if !bytes.Contains(got[1], []byte("internal")) || !bytes.Contains(got[1], []byte("cut short")) {
			t.Errorf("cut at %d: %q", cut, got[1])
		}
	}
	for _, op := range []abi.Call{abi.CallBatch, abi.NumCalls, 1 << 31} {
		got := answers(t, core.AppendBatch(nil, append(item(op, tinyRequest()), good...), run))
		if len(got) != 1 || !bytes.Contains(got[0], []byte("internal")) || !bytes.Contains(got[0], []byte("batch or unknown")) {
			t.Errorf("op %d: %q", op, got)
		}
	}
	view := answers(t, core.AppendBatch(nil, item(abi.CallAssembleView, nil)[:6], run))
	if len(view) != 1 || !bytes.Equal(view[0], core.AppendCallError(nil, abi.CallAssembleView, "batch: an item is cut short (its op and size, or fewer bytes than its size)")) {
		t.Errorf("a header cut inside its size: an error view: %q", view)
	}
}

func tinyRequest() []byte { return core.EncodeRequest(benchreq.Tiny()) }

func TestIsAnswerRefuses(t *testing.T) {
	resp := core.AssembleBytes(tinyRequest())
	start := core.PromptStartBytes(tinyRequest())
	view := core.AppendAssembleViewBytes(nil, tinyRequest())
	for _, c := range []struct {
		op abi.Call
		b  []byte
	}{
		{abi.CallAssemble, nil}, {abi.CallAssemble, []byte("garbage, not msgpack")}, {abi.CallAssemble, resp[:8]},
		{abi.CallAssemble, start}, {abi.CallPromptStart, resp}, {abi.CallAddStep, resp},
		{abi.CallAssembleView, resp}, {abi.CallAssembleView, view[:3]}, {abi.CallAssembleView, view[:20]},
		{abi.CallCompare, resp}, {abi.CallCompare, []byte("{")}, {abi.CallBatch, []byte{9, 0, 0, 0, 1}},
	} {
		if core.IsAnswer(c.op, c.b) {
			t.Errorf("%s accepts %q", c.op.Name(), c.b)
		}
	}
	for _, c := range []struct {
		op abi.Call
		b  []byte
	}{
		{abi.CallAssemble, resp}, {abi.CallPromptStart, start}, {abi.CallAssembleView, view},
		{abi.CallBatch, nil}, {abi.CallBatch, item(abi.CallAssemble, nil)},
	} {
		if !core.IsAnswer(c.op, c.b) {
			t.Errorf("%s refuses %q", c.op.Name(), c.b)
		}
	}
	if !core.ResponseOK(resp) || !core.ResponseOK(start) || core.ResponseOK(core.AssembleBytes([]byte{0xc1})) || core.ResponseOK(nil) {
		t.Error("ResponseOK does not tell an ok response from an error response")
	}
}

// TestAppendArgsCounts: a wrong number of arguments is a coded error naming
// the call and the counts, never a panic; the right number packs the map.
func TestAppendArgsCounts(t *testing.T) {
	for _, tc := range []struct {
		c    abi.Call
		n    int
		want string
	}{
		{abi.CallExport, 2, "export takes 3 arguments (request, provider, options), got 2"},
		{abi.CallCacheReport, 0, "cache_report takes 2 arguments (requests, usage), got 0"},
		{abi.CallCompare, 3, "compare takes 2 arguments (a, b), got 3"},
		{abi.CallAssemble, 1, "assemble takes no map of arguments (its request is one value: give it to AppendCall), got 1 argument"},
		{abi.NumCalls + 3, 1, fmt.Sprintf("no call numbered %d in the contract's table (abi.Calls)", abi.NumCalls+3)},
	} {
		args := make([][]byte, tc.n)
		for i := range args {
			args[i] = []byte{0xc0}
		}
		dst, err := core.AppendArgs([]byte("x"), tc.c, args...)
		if err == nil || err.Code != core.CodeMalformedRequest || err.Path != "" || err.Message != tc.want || string(dst) != "x" {
			t.Errorf("%d arguments of call %d: %v, %q; want malformed_request: %s", tc.n, tc.c, err, dst, tc.want)
		}
	}
	got, err := core.AppendArgs(nil, abi.CallCompare, []byte{0xc0}, []byte{0x90})
	if want := "\x82\xa1a\xc0\xa1b\x90"; err != nil || string(got) != want {
		t.Errorf("compare's two arguments: %q, %v; want %q", got, err, want)
	}
}
