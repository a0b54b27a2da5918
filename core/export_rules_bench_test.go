package core_test

import (
	"testing"
	"time"

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

// exportSpeedRows are the export rows of make bench (tools/benchreport's
// exportRows) and the plain OpenAI ones: provider and option.
var exportSpeedRows = []struct{ name, provider, option string }{
	{"anthropic", "anthropic", ""},
	{"openai-chat", "openai-chat", ""},
	{"openai-chat+explicit", "openai-chat", "explicit_breakpoints"},
	{"openai-responses", "openai-responses", ""},
	{"openai-responses+explicit", "openai-responses", "explicit_breakpoints"},
	{"openrouter", "openrouter", ""},
	{"bedrock-converse", "bedrock-converse", ""},
	{"gemini", "gemini", ""},
	{"gemini-cache", "gemini-cache", ""},
	{"gemini+cached_content", "gemini", "cached_content"},
}

// benchExportArgs are the export's arguments as make bench sends them: the
// request as msgpack in a bin, the provider and the option (or nil).
func benchExportArgs(req []byte, provider, option string) []byte {
	args := msgp.AppendBytes(msgp.AppendString(msgp.AppendMapHeader(nil, 3), "request"), req)
	args = msgp.AppendString(msgp.AppendString(args, "provider"), provider)
	args = msgp.AppendString(args, "options")
	switch option {
	case "":
		return msgp.AppendNil(args)
	case "cached_content":
		return msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(args, 1), option), "cachedContents/bench")
	}
	return msgp.AppendBool(msgp.AppendString(msgp.AppendMapHeader(args, 1), option), true)
}

// BenchmarkExportVsAssemble: each export row of make bench on the typical
// request beside assembling it, in one loop (a batch of each per
// iteration, alternating which goes first), so that the machine's load
// falls on both: the metric x-assemble is the export's time over
// assemble's (the goal is ≤ 1.10), ns/op the pair's.
func BenchmarkExportVsAssemble(b *testing.B) {
	req := core.EncodeRequest(benchreq.Typical())
	for _, row := range exportSpeedRows {
		args := benchExportArgs(req, row.provider, row.option)
		b.Run(row.name, func(b *testing.B) {
			var dst []byte
			if dst = wirejson.AppendExport(dst[:0], args); len(dst) < 200 {
				b.Fatalf("not a body: %q", dst)
			}
			var ta, te time.Duration
			const k = 8
			i := 0
			for b.Loop() {
				t0 := time.Now()
				if i%2 == 0 {
					for range k {
						dst = core.AppendAssembleBytes(dst[:0], req)
					}
				} else {
					for range k {
						dst = wirejson.AppendExport(dst[:0], args)
					}
				}
				t1 := time.Now()
				if i%2 == 0 {
					for range k {
						dst = wirejson.AppendExport(dst[:0], args)
					}
					te += time.Since(t1)
					ta += t1.Sub(t0)
				} else {
					for range k {
						dst = core.AppendAssembleBytes(dst[:0], req)
					}
					ta += time.Since(t1)
					te += t1.Sub(t0)
				}
				i++
			}
			b.ReportMetric(float64(te)/float64(ta), "x-assemble")
		})
	}
}
