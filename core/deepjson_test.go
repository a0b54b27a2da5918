package core_test

import (
	"math/rand/v2"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/deepjson"
	"github.com/polyloop/assembly/wirejson"
)

// TestDeepJSONAtTheRequestLimit: the JSON reader writes a value past its
// depth bound small, yet a request is too_large by the size of the msgpack
// its JSON says. With the limit lowered to just under that size, to that
// size, and between it and the small msgpack's, every caller of the reader
// answers deep requests at every place as the core answers the msgpack they
// say (deepjson.Check): too_large with that size, or the first problem.
func TestDeepJSONAtTheRequestLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 2))
	tooLarge := 0
	for seed := range uint64(4 * len(deepjson.Places)) {
		pl := deepjson.Places[seed%uint64(len(deepjson.Places))]
		v := pl.Wrap(deepjson.Chain(80+r.IntN(40), deepjson.Random(seed), deepjson.Num("1e0", 1)))
		small, err := wirejson.ToMsgpack(nil, v.JSON)
		if err != nil {
			t.Fatalf("%s: %v", pl.Name, err)
		}
		if len(small) >= len(v.MP) {
			t.Fatalf("%s: the msgpack with stand-ins is %d bytes, not less than the %d the JSON says", pl.Name, len(small), len(v.MP))
		}
		for _, limit := range []int{len(v.MP) - 1, len(v.MP), len(small) + r.IntN(len(v.MP)-len(small)), len(small) - 1} {
			restore := core.SetLimits(limit, core.MaxResponseBytes)
			err := deepjson.Check(v.JSON, v.MP)
			_, verdict := core.DecodeResponse(core.AppendAssembleBytes(nil, v.MP))
			restore()
			if e, ok := verdict.(*core.Error); !ok {
				t.Fatalf("%s: a deep request is answered %v", pl.Name, verdict)
			} else if e.Code == core.CodeTooLarge {
				tooLarge++
			}
			if err != nil {
				t.Fatalf("%s, limit %d (msgpack %d bytes, %d with stand-ins): %v", pl.Name, limit, len(v.MP), len(small), err)
			}
		}
	}
	if tooLarge < len(deepjson.Places) {
		t.Fatalf("only %d answers too_large", tooLarge)
	}
	t.Logf("%d requests at 4 limits each, %d of the answers too_large", 4*len(deepjson.Places), tooLarge)
}
