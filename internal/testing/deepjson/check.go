package deepjson

import (
	"bytes"
	"fmt"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wirejson"
)

// other is an ordinary request, the other side of the compare requests.
var other = Obj(tmpl, M("run_messages", Arr(msg(block(M("type", Str("text")), M("text", Str("hi")))))))

// Check answers text through each caller of the JSON reader and compares
// the answer with the core's to faithful, the msgpack text says:
// wirejson.AppendAssemble (the module's assemble_json, so Runner.AssembleJSON
// and the bindings; the CLI converts with wirejson.Request, as it does),
// wirejson.AppendAssembleView, and wirejson.AppendCompare with text as
// either side, in either order, beside an ordinary request and beside
// itself. The error names the first that differs.
func Check(text, faithful []byte) error {
	if got, want := wirejson.AppendAssemble(nil, text), core.AppendAssembleBytes(nil, faithful); !bytes.Equal(got, want) {
		return mismatch("assemble_json", got, want)
	}
	if got, want := wirejson.AppendAssembleView(nil, text), core.AppendAssembleViewBytes(nil, faithful); !bytes.Equal(got, want) {
		return mismatch("assemble_view_json", got, want)
	}
	oracle := func(t []byte) ([]byte, *core.Error) {
		if bytes.Equal(t, text) {
			return faithful, nil
		}
		return other.MP, nil
	}
	for _, sides := range [][2][2]string{
		{{"a", string(text)}, {"b", string(other.JSON)}}, {{"b", string(other.JSON)}, {"a", string(text)}},
		{{"a", string(other.JSON)}, {"b", string(text)}}, {{"b", string(text)}, {"a", string(other.JSON)}},
		{{"a", string(text)}, {"b", string(text)}},
	} {
		req := msgp.AppendMapHeader(nil, 2)
		for _, s := range sides {
			req = msgp.AppendString(msgp.AppendString(req, s[0]), s[1])
		}
		if got, want := wirejson.AppendCompare(nil, req), core.AppendCompareBytes(nil, req, oracle); !bytes.Equal(got, want) {
			return mismatch("compare "+sides[0][0]+", "+sides[1][0], got, want)
		}
	}
	return nil
}

func mismatch(call string, got, want []byte) error {
	return fmt.Errorf("%s answers differently from the core on the msgpack the JSON says:\n got  %.300q\n want %.300q", call, got, want)
}
