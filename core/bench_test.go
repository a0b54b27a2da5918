package core_test

import (
	"fmt"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/benchreq"
)

// BenchmarkAssembleBytes measures the wire function on the shared benchmark
// requests. SetBytes is the response size: MB/s is output throughput.
func BenchmarkAssembleBytes(b *testing.B) {
	for _, n := range benchreq.Set() {
		req := core.EncodeRequest(n.Request)
		resp := core.AssembleBytes(req)
		if resp[7] != 0xc3 {
			b.Fatalf("%s: not ok", n.Name)
		}
		b.Run(n.Name, func(b *testing.B) {
			b.SetBytes(int64(len(resp)))
			b.ReportAllocs()
			for b.Loop() {
				core.AssembleBytes(req)
			}
			b.ReportMetric(float64(len(n.Request.Steps)*2+9), "messages")
		})
	}
}

// BenchmarkPromptAddStep measures one AddStep (a 1 KB step) on a prompt that
// already holds 0, 1,000 and 10,000 steps: the cost must not grow with the
// history (docs/SPEC.md §7.3).
func BenchmarkPromptAddStep(b *testing.B) {
	for _, h := range []int{0, 1000, 10000} {
		req := benchreq.React(h, 1024)
		s := benchreq.React(2, 1024).Steps[1]
		b.Run(fmt.Sprintf("history=%d", h), func(b *testing.B) {
			p, err := core.NewPrompt(req)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := p.AddStep(s.RawOutput, s.Observation); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAssemble measures the typed entry point (its check runs the wire
// decoder on the request's encoding) on the shared benchmark requests.
func BenchmarkAssemble(b *testing.B) {
	for _, n := range benchreq.Set() {
		b.Run(n.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.Assemble(n.Request); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
