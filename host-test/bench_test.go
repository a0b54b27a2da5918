package hosttest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"testing"

	"github.com/polyloop/assembly/core"
	plumbing "github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/wasmhost"
	"github.com/polyloop/assembly/wasmhost/wasmtime"
)

// BenchmarkEngines runs the shared benchmark requests on every engine, side
// by side in one run; MB/s is response bytes. The wasm/native ratio is the
// ratio of the ns/op lines.
func BenchmarkEngines(b *testing.B) {
	for _, n := range benchreq.Set() {
		req := core.EncodeRequest(n.Request)
		want := core.AssembleBytes(req)
		for _, e := range engines {
			b.Run(n.Name+"/"+e.name, func(b *testing.B) {
				if got := e.assemble(req); !bytes.Equal(got, want) {
					b.Fatalf("%s answers differently", e.name)
				}
				b.SetBytes(int64(len(want)))
				b.ReportAllocs()
				for b.Loop() {
					e.assemble(req)
				}
			})
		}
	}
}

// BenchmarkAssembleJSON: assemble_json (JSON text in) against assemble
// (the same request as msgpack) on each engine, side by side; the difference
// is the JSON → msgpack conversion inside the module. MB/s is JSON text.
func BenchmarkAssembleJSON(b *testing.B) {
	for _, n := range benchreq.Set() {
		mp := core.EncodeRequest(n.Request)
		text := benchreq.JSONText(n.Request)
		want := core.AssembleBytes(mp)
		for _, r := range runners {
			calls := []struct {
				name string
				in   []byte
				fn   func([]byte) []byte
			}{{"json", text, r.AssembleJSON}, {"msgpack", mp, r.AssembleBytes}}
			for _, c := range calls {
				b.Run(n.Name+"/"+r.Engine()+"/"+c.name, func(b *testing.B) {
					if !bytes.Equal(c.fn(c.in), want) {
						b.Fatalf("%s answers differently", c.name)
					}
					b.SetBytes(int64(len(text)))
					for b.Loop() {
						c.fn(c.in)
					}
				})
			}
		}
	}
}

// BenchmarkPromptAddStep measures one Prompt.AddStep (a 1 KB step) on each
// engine, on a prompt that already holds 0, 1,000 and 10,000 steps: the cost
// must not grow with the history (docs/SPEC.md §7.3).
func BenchmarkPromptAddStep(b *testing.B) {
	for _, h := range []int{0, 1000, 10000} {
		req := benchreq.React(h, 1024)
		s := benchreq.React(2, 1024).Steps[1]
		for _, r := range runners {
			b.Run(fmt.Sprintf("history=%d/%s", h, r.Engine()), func(b *testing.B) {
				p, err := r.NewPrompt(req)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if err := p.AddStep(s.RawOutput, s.Observation); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

type newRunner func(wasmhost.Options) (*wasmhost.Runner, error)

var runnerKinds = []struct {
	name string
	new  newRunner
}{{"wazero", wasmhost.New}, {"wasmtime", wasmtime.New}}

// BenchmarkCompile times creating a runner (compiling the module) with no
// cache, and with a warm disk cache.
func BenchmarkCompile(b *testing.B) {
	for _, k := range runnerKinds {
		b.Run(k.name+"/cold", func(b *testing.B) {
			for b.Loop() {
				r, err := k.new(wasmhost.Options{CacheDir: "-"})
				if err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		})
		dir := b.TempDir()
		r, err := k.new(wasmhost.Options{CacheDir: dir}) // fills the cache
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
		b.Run(k.name+"/warm-cache", func(b *testing.B) {
			for b.Loop() {
				r, err := k.new(wasmhost.Options{CacheDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		})
	}
}

// BenchmarkFirstCall times what a new process pays before its first answer:
// loading the module with a warm cache, instantiating, one tiny call.
func BenchmarkFirstCall(b *testing.B) {
	tiny := core.EncodeRequest(benchreq.Tiny())
	for _, k := range runnerKinds {
		dir := b.TempDir()
		r, _ := k.new(wasmhost.Options{CacheDir: dir})
		r.Close()
		b.Run(k.name+"/warm-cache", func(b *testing.B) {
			for b.Loop() {
				r, err := k.new(wasmhost.Options{CacheDir: dir})
				if err != nil {
					b.Fatal(err)
				}
				r.AssembleBytes(tiny)
				r.Close()
			}
		})
	}
}

// BenchmarkInstantiate times one instance: instantiation and _initialize.
func BenchmarkInstantiate(b *testing.B) {
	for _, r := range runners {
		b.Run(r.Engine(), func(b *testing.B) {
			for b.Loop() {
				if err := r.Instantiate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkModuleSize reports the module's size, raw and gzip -9.
func BenchmarkModuleSize(b *testing.B) {
	wasm, err := plumbing.LoadModule(plumbing.Config{})
	if err != nil {
		b.Fatal(err)
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(wasm)
	w.Close()
	for b.Loop() {
	}
	b.ReportMetric(float64(len(wasm)), "raw-bytes")
	b.ReportMetric(float64(z.Len()), "gzip-bytes")
}
