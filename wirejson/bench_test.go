package wirejson_test

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/wirejson"
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

// BenchmarkNextMsgpack: splitting a stream of 100 copies of each benchmark
// request into its values, as the command-line tool's --batch reads them;
// MB/s is stream bytes.
func BenchmarkNextMsgpack(b *testing.B) {
	for _, n := range benchreq.Set() {
		one := core.EncodeRequest(n.Request)
		if len(one) > 2<<20 {
			continue
		}
		stream := bytes.Repeat(one, 100)
		b.Run(n.Name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			var dst []byte
			for b.Loop() {
				r := bufio.NewReader(bytes.NewReader(stream))
				for {
					var err error
					if dst, err = wirejson.NextMsgpack(r, dst[:0]); err != nil {
						break
					}
				}
			}
		})
	}
}
