package wirejson_test

import (
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/wirejson"
	"github.com/polyloop/assembly/internal/testing/benchreq"
)

// BenchmarkToMsgpack: the JSON → msgpack conversion of assemble_json,
// natively; MB/s is JSON text. "core" is core.AppendAssembleBytes of the
// converted request, for the share of the whole call.
func BenchmarkToMsgpack(b *testing.B) {
	for _, n := range benchreq.Set() {
		text := benchreq.JSONText(n.Request)
		mp, err := wirejson.ToMsgpack(nil, text)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(n.Name+"/convert", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				wirejson.ToMsgpack(nil, text)
			}
		})
		b.Run(n.Name+"/core", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				core.AppendAssembleBytes(nil, mp)
			}
		})
	}
}
