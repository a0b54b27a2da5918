package core_test

import (
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/wirejson"
)

// BenchmarkExport: the export of the typical request (a map planned in
// place) for each provider, beside BenchmarkExportAssemble, the assembly
// of the same request: the provider rules must keep the two close.
func BenchmarkExport(b *testing.B) {
	req := core.EncodeRequest(benchreq.Typical())
	for _, provider := range []string{"anthropic", "openai-chat", "openai-responses", "openrouter", "bedrock-converse", "gemini", "gemini-cache"} {
		args := msgp.AppendMapHeader(nil, 2)
		args = append(msgp.AppendString(args, "request"), req...)
		args = msgp.AppendString(msgp.AppendString(args, "provider"), provider)
		b.Run(provider, func(b *testing.B) {
			var dst []byte
			b.ReportAllocs()
			for b.Loop() {
				dst = wirejson.AppendExport(dst[:0], args)
			}
		})
	}
	b.Run("assemble", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = core.AssembleBytes(req)
		}
	})
}
