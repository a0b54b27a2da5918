package hosttest

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// TestAppendAssembleBytesEveryEngine: Runner.AppendAssembleBytes appends
// exactly AssembleBytes' answer (the native core's) after what dst holds,
// leaving those bytes alone, on each engine: on every vector, on random
// requests, and on requests that grow the reused buffer (tiny to 1 MB and
// back); and a failure of the sandbox appends its error response.
func TestAppendAssembleBytesEveryEngine(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	var reqs [][]byte
	for _, c := range cases {
		reqs = append(reqs, c.Request)
	}
	r := rand.New(rand.NewPCG(2026, 12))
	for range 500 {
		reqs = append(reqs, randreq.Bytes(r))
	}
	for _, n := range []*core.Request{benchreq.Tiny(), benchreq.Sized(1 << 20), benchreq.Typical(), benchreq.Sized(1 << 20)} {
		reqs = append(reqs, core.EncodeRequest(n))
	}
	for _, rn := range runners {
		buf := make([]byte, 0, 16)
		for i, req := range reqs {
			prefix := "request " + strconv.Itoa(i) + ": "
			buf = append(buf[:0], prefix...)
			buf = rn.AppendAssembleBytes(buf, req)
			if want := core.AssembleBytes(req); string(buf[:len(prefix)]) != prefix || !bytes.Equal(buf[len(prefix):], want) {
				t.Fatalf("%s: request %d: AppendAssembleBytes appended %d bytes (prefix kept: %v), want the native core's %d", rn.Engine(), i, len(buf)-len(prefix), string(buf[:len(prefix)]) == prefix, len(want))
			}
		}
		// Room enough: the answer lands in dst's own array.
		big := core.EncodeRequest(benchreq.Sized(1 << 20))
		room := make([]byte, 3, 4<<20)
		if got := rn.AppendAssembleBytes(room, big); &got[0] != &room[0] {
			t.Fatalf("%s: with room in dst, the answer went to a new array", rn.Engine())
		}
	}
	t.Logf("%d requests on %d engines, each appended after a prefix to one reused buffer", len(reqs), len(runners))

	// A trap appends the internal error response after dst's bytes.
	capped, huge := cappedRunners(t)
	for _, rn := range capped {
		got := rn.AppendAssembleBytes([]byte("kept"), huge)
		if string(got[:4]) != "kept" {
			t.Fatalf("%s: a trapped call overwrote dst's bytes", rn.Engine())
		}
		if !bytes.Equal(got[4:], rn.AssembleBytes(huge)) {
			t.Fatalf("%s: a trapped call appended other bytes than AssembleBytes answers", rn.Engine())
		}
		if _, err := core.DecodeResponse(got[4:]); err == nil || err.(*core.Error).Code != core.CodeInternal || err.(*core.Error).Message != outOfMemory {
			t.Fatalf("%s: a trapped call: want internal %q, got %v", rn.Engine(), outOfMemory, err)
		}
	}
}
