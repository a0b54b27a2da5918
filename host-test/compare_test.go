package hosttest

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wirejson"
	"github.com/tinylib/msgp/msgp"
)

// The module's compare export (docs/SPEC.md §7.9) on wazero and wasmtime
// answers the bytes the native core does (wirejson.AppendCompare), for
// pairs of vector requests, random requests (valid and not), recorded
// message lists and sides as JSON text.

// sameCompare checks one compare request; it reports whether the answer is
// a comparison (not an error).
func sameCompare(t *testing.T, label string, req []byte) bool {
	t.Helper()
	want := wirejson.AppendCompare(nil, req)
	for _, r := range runners {
		if got := r.AppendCall(abi.CallCompare, nil, req); !bytes.Equal(got, want) {
			t.Fatalf("%s: %s's compare differs from native:\n native: %.300q\n %s: %.300q", label, r.Engine(), want, r.Engine(), got)
		}
	}
	return bytes.HasPrefix(want, []byte(`{"identical":`))
}

func comparePair(a, b []byte) []byte {
	req := msgp.AppendString(msgp.AppendMapHeader(nil, 2), "a")
	return append(msgp.AppendString(append(req, a...), "b"), b...)
}

func TestCompareEveryEngine(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range cases {
		next := cases[(k+1)%len(cases)].Request
		sameCompare(t, c.File+"/"+c.Name, comparePair(c.Request, next))
		sameCompare(t, c.File+"/"+c.Name+" with itself", comparePair(c.Request, c.Request))
		want := wirejson.AppendCompare(nil, comparePair(c.Request, next))
		for _, r := range runners { // the facade packs through the table (core.AppendArgs)
			if got := r.Compare(c.Request, next); !bytes.Equal(got, want) {
				t.Fatalf("%s: %s's Compare(a, b) differs from the compare of {a, b}", c.Name, r.Engine())
			}
		}
	}
	r := rand.New(rand.NewPCG(2026, 21))
	n, compared := min(randomCount(), 2000), 0
	for i := range n {
		a, b := randreq.Bytes(r), randreq.Bytes(r)
		if sameCompare(t, "random pair "+strconv.Itoa(i)+" (seed 2026/21)", comparePair(a, b)) {
			compared++
		}
	}
	if compared == 0 {
		t.Fatal("no random pair was compared: every one was an error")
	}
	recorded := msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(msgp.AppendArrayHeader(nil, 1), 2), "role"), "system")
	recorded = msgp.AppendString(msgp.AppendString(recorded, "content"), "You are a careful agent.")
	sameCompare(t, "a recorded list", comparePair(recorded, cases[0].Request))
	sameCompare(t, "JSON text sides", comparePair(msgp.AppendString(nil, `[{"role":"user","content":"hi"}]`), msgp.AppendString(nil, `{"v":1,"observation_template":"{observation}"}`)))
	sameCompare(t, "a broken request", []byte{0x82, 0xa1, 'a'})
	sameCompare(t, "bin sides", comparePair(msgp.AppendBytes(nil, recorded), msgp.AppendBytes(nil, cases[0].Request)))
	for _, side := range [][]byte{msgp.AppendBytes(nil, nil), msgp.AppendString(nil, " \n"), msgp.AppendBytes(nil, append(recorded, 0x90)), msgp.AppendBytes(nil, recorded[:3])} {
		sameCompare(t, "an empty or overfull side "+strconv.Quote(string(side)), comparePair(recorded, side))
	}
	t.Logf("%d vector pairs and %d random pairs (%d compared): compare identical on native and %d modules", 2*len(cases), n, compared, len(runners))
}
