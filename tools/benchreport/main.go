// Command benchreport runs every host of the assembly core on the shared
// benchmark requests (package benchreq) in one go and writes one table:
// BENCHMARKS.md (regenerated) and BENCHMARKS.json, plus an SVG plot of the
// add_step cost against the history length.
//
//	go run ./tools/benchreport [-quick] [-data-sets-only] [-python PY] [-node NODE] [-out BENCHMARKS.md] [-json BENCHMARKS.json]
//
// It measures the Go hosts itself (native core, wazero, wasmtime-go), side by
// side: each sample round runs every engine once, so a burst of load on a
// shared machine hits all of them. The Python and Node benchmarks
// (bindings/python/bench/bench.py, bindings/js/bench/bench.mjs) run as
// subprocesses on the same request files with --json and report their raw
// samples; a host whose benchmark cannot run is listed with the reason.
// The data-set figures (datasets.go) come the same way from
// bindings/python/bench/data_bench.py --json and bindings/js/bench/messages.mjs
// --json (-data-sets-only measures them alone). `make bench` and
// `make bench.quick` call it.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/polyloop/assembly/core"
	plumbing "github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/wasmhost"
)

// newWasmtime is wasmtime.New when built with cgo (wasmtime.go), else nil.
var newWasmtime func(wasmhost.Options) (*wasmhost.Runner, error)

// plan is how much to measure.
type plan struct {
	Quick     bool     `json:"quick"`
	Samples   int      `json:"samples"`            // samples per figure
	SampleSec float64  `json:"sample_seconds"`     // target duration of one sample (a batch of calls)
	Requests  []string `json:"requests"`           // request names measured
	Histories []int    `json:"add_step_histories"` // history lengths for add_step
	Cold      int      `json:"cold_compile_samples"`
}

func main() {
	quick := flag.Bool("quick", false, "reduced run (under a minute): fewer and shorter samples, no 16MB request")
	python := flag.String("python", "", "Python interpreter with the binding installed (the .venv of `make python.venv`); empty skips Python")
	node := flag.String("node", "", "node executable; empty skips Node")
	out := flag.String("out", "BENCHMARKS.md", "Markdown table to write")
	jsonOut := flag.String("json", "BENCHMARKS.json", "machine-readable results to write")
	readme := flag.String("readme", "", "README to update between its benchmark markers (empty: none)")
	previewFrom := flag.String("preview-from", "", "measure nothing: re-render the report recorded in -json with the prompt preview's figures from this output of preview/bench/preview.mjs --json")
	dataOnly := flag.Bool("data-sets-only", false, "measure only the data-set figures (bindings/python/bench/data_bench.py, bindings/js/bench/messages.mjs)")
	only := flag.String("only", "", "measure one group of figures and print its goals, writing no report: export (each export row against assemble, wazero)")
	flag.Parse()

	p := plan{Quick: *quick, Samples: 7, SampleSec: 0.15, Requests: []string{"tiny", "typical", "1MB", "16MB"},
		Histories: []int{10, 100, 1000, 10000}, Cold: 3}
	if *quick {
		p = plan{Quick: true, Samples: 3, SampleSec: 0.03, Requests: []string{"tiny", "typical", "1MB"},
			Histories: []int{10, 1000}, Cold: 1}
	}
	if *only != "" {
		printOnly(p, *only)
		return
	}
	var rep *Report
	var err error
	if *previewFrom != "" {
		rep, err = withPreview(*jsonOut, *previewFrom)
	} else if *dataOnly {
		rep = newReport(p)
		measureDataSets(rep, p, *python, *node)
	} else {
		rep, err = run(p, *python, *node)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	svgPath, err := writeReport(rep, *out, *jsonOut, *readme)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	for _, g := range rep.Goals {
		met := "missed"
		if g.Met {
			met = "met"
		}
		fmt.Printf("%-52s %-24s %-40s %s\n", g.Figure, g.Goal, g.Reached, met)
	}
	for k, v := range rep.Skipped {
		fmt.Printf("not measured: %s: %s\n", k, v)
	}
	fmt.Printf("wrote %s, %s, %s\n", *out, *jsonOut, svgPath)
}

// writeReport writes the report's JSON, its add_step chart, its Markdown
// and (when readme is not empty) the README's benchmark table; it returns
// the chart's path.
func writeReport(rep *Report, out, jsonOut, readme string) (string, error) {
	js, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(jsonOut, append(js, '\n'), 0o644); err != nil {
		return "", err
	}
	svgPath := strings.TrimSuffix(out, filepath.Ext(out)) + "-add_step.svg"
	if err := os.WriteFile(svgPath, []byte(addStepSVG(rep)), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(out, []byte(markdown(rep, filepath.Base(svgPath))), 0o644); err != nil {
		return "", err
	}
	if readme != "" {
		return svgPath, updateReadme(readme, rep)
	}
	return svgPath, nil
}

// ---- results ----

// Stat is the spread of a figure over its samples; each sample is the mean
// time of one call over a batch of Calls calls, in seconds.
type Stat struct {
	Min     float64   `json:"min_s"`
	Median  float64   `json:"median_s"`
	Max     float64   `json:"max_s"`
	Calls   int       `json:"calls_per_sample,omitempty"`
	Samples []float64 `json:"samples_s"`
}

func stat(samples []float64, calls int) Stat {
	s := slices.Clone(samples)
	slices.Sort(s)
	if len(s) == 0 {
		return Stat{}
	}
	return Stat{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1], Calls: calls, Samples: samples}
}

// Row is one engine on one request.
type Row struct {
	Host        string  `json:"host"`
	Engine      string  `json:"engine"`
	Request     string  `json:"request"`
	RequestB    int     `json:"request_bytes"`
	ResponseB   int     `json:"response_bytes"`
	Time        Stat    `json:"time"`
	MBps        float64 `json:"response_mb_per_s"`
	VsNative    float64 `json:"ratio_to_native_go,omitempty"`
	VsNativeMin float64 `json:"ratio_to_native_go_min,omitempty"` // the lowest round, when paired
	VsNativeMax float64 `json:"ratio_to_native_go_max,omitempty"` // the highest round, when paired
	VsReference float64 `json:"ratio_to_reference,omitempty"`
}

// StepRow is the cost of one add_step at a history length.
type StepRow struct {
	Host    string `json:"host"`
	History int    `json:"history_steps"`
	Time    Stat   `json:"time"`
}

// StartRow is a start-up figure of one engine.
type StartRow struct {
	Host   string `json:"host"`
	Figure string `json:"figure"`
	Time   Stat   `json:"time"`
}

// StageRow splits one host's call on one request into stages.
type StageRow struct {
	Host    string             `json:"host"`
	Request string             `json:"request"`
	Stages  map[string]float64 `json:"median_s"`
}

// ThroughputRow is one way of running many copies of the typical request
// with a number of workers (the goal of throughput on data sets).
type ThroughputRow struct {
	Host      string  `json:"host"`
	Engine    string  `json:"engine"`
	Workers   int     `json:"workers"`
	Requests  int     `json:"requests"`
	ResponseB int     `json:"response_bytes"`
	Time      Stat    `json:"time"`
	PerSecond float64 `json:"requests_per_s"`
	MBps      float64 `json:"mb_per_s"`
	// Scaling is the median over the rounds of this row's requests per
	// second over the one-worker row's in the same round (each round runs
	// them one right after the other), or the ratio of the medians when the
	// rows do not have a sample per round; ScalingMin and ScalingMax are
	// the lowest and highest round.
	Scaling    float64 `json:"vs_one_worker,omitempty"`
	ScalingMin float64 `json:"vs_one_worker_min,omitempty"`
	ScalingMax float64 `json:"vs_one_worker_max,omitempty"`
}

// Control reports whether t is a control (work that shares nothing, for what
// the machine lets threads gain), not a way of running requests.
func (t ThroughputRow) Control() bool { return strings.HasPrefix(t.Engine, "control: ") }

// MemRow is the linear memory one instance needed.
type MemRow struct {
	Host    string `json:"host"`
	Request string `json:"request"`
	Bytes   uint64 `json:"bytes"`
}

// Goal is one line of the goal table (speed, and throughput on data sets).
type Goal struct {
	Figure  string `json:"figure"`
	Goal    string `json:"goal"`
	Reached string `json:"reached"`
	Met     bool   `json:"met"`
}

// Report is everything written to BENCHMARKS.json.
type Report struct {
	When       string            `json:"when"`
	Command    string            `json:"command"`
	Machine    map[string]string `json:"machine"`
	Versions   map[string]string `json:"versions"`
	Plan       plan              `json:"plan"`
	Assemble   []Row             `json:"assemble"`
	AddStep    []StepRow         `json:"add_step"`
	Startup    []StartRow        `json:"startup"`
	Stages     []StageRow        `json:"stages,omitempty"`
	Throughput []ThroughputRow   `json:"throughput,omitempty"`
	Memory     []MemRow          `json:"peak_memory"`
	Module     map[string]int    `json:"module_bytes"`
	Goals      []Goal            `json:"goals"`
	Preview    *Preview          `json:"preview,omitempty"`
	DataSets   *DataSets         `json:"data_sets,omitempty"`
	Skipped    map[string]string `json:"skipped,omitempty"`
	Reference  map[string]string `json:"references"`
}

// ---- Go hosts ----

type engine struct {
	host, name string
	call       func([]byte) []byte
}

// runnerKind is one WebAssembly engine of the Go hosts: how to make a
// runner, and one runner kept for the instantiate figure.
type runnerKind struct {
	host string
	new  func(wasmhost.Options) (*wasmhost.Runner, error)
	r    *wasmhost.Runner
}

// run measures every host by the plan: the Go hosts side by side, then the
// Python and Node benchmarks and the prompt preview as subprocesses.
func run(p plan, python, node string) (*Report, error) {
	rep := newReport(p)
	wasm, err := plumbing.LoadModule(plumbing.Config{})
	if err != nil {
		return nil, err
	}
	rep.Module["raw"], rep.Module["gzip"] = len(wasm), gzipSize(wasm)

	cache, err := os.MkdirTemp("", "benchreport-cache")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	opts := wasmhost.Options{Module: wasm, CacheDir: cache, MaxInstances: 1}
	kinds, closeKinds, err := goRunners(rep, opts)
	if err != nil {
		return nil, err
	}
	defer closeKinds()

	reqDir, err := os.MkdirTemp("", "benchreport-requests")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(reqDir)
	reqs, resps, err := writeRequests(p, reqDir)
	if err != nil {
		return nil, err
	}

	fmt.Fprintln(os.Stderr, "benchreport: Go hosts (native, wazero, wasmtime-go), side by side")
	if err := measureAssemble(rep, p, opts, reqs, resps); err != nil {
		return nil, err
	}
	if err := measureMemory(rep, p, kinds, opts, reqs); err != nil {
		return nil, err
	}
	fmt.Fprintln(os.Stderr, "benchreport: add_step against history length (Go)")
	measureAddStepGo(rep, p, kinds[0].r)
	fmt.Fprintln(os.Stderr, "benchreport: compile, first call, instantiate (Go)")
	if err := measureStartup(rep, p, kinds, wasm, cache, reqs["tiny"]); err != nil {
		return nil, err
	}
	measureOthers(rep, p, python, node, reqDir)
	rep.Machine["load average (end)"] = loadavg()
	finish(rep)
	fmt.Fprintln(os.Stderr, "benchreport: cache report and export (Go wazero)")
	measureCaching(rep, p, kinds[0].r)
	measureLoop(rep, p, kinds[0].r, python, node)
	measurePool(rep, p, python)
	measureDataSets(rep, p, python, node)
	previewGoals(rep)
	return rep, nil
}

// newReport is the report before any measurement: when, where, what.
func newReport(p plan) *Report {
	rep := &Report{
		When:     time.Now().UTC().Format(time.RFC3339),
		Command:  "make bench",
		Machine:  machine(),
		Versions: versions(),
		Plan:     p,
		Module:   map[string]int{},
		Skipped:  map[string]string{},
		Reference: map[string]string{
			"Python": "testdata/gen/reference.py (pure Python, CPython's str.format; the spec's independent oracle)",
			"Node":   "none: the JavaScript benchmark has no pure-JavaScript implementation of the spec",
		},
	}
	if p.Quick {
		rep.Command = "make bench.quick"
	}
	return rep
}

// gzipSize is the size of b gzipped at the best compression.
func gzipSize(b []byte) int {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return z.Len()
}

// goRunners opens one runner of each WebAssembly engine of the Go hosts
// (wazero first; wasmtime-go when built with cgo, else it is listed as
// skipped) and returns them with the function that closes them.
func goRunners(rep *Report, opts wasmhost.Options) ([]runnerKind, func(), error) {
	wz, err := wasmhost.New(opts)
	if err != nil {
		return nil, nil, err
	}
	kinds := []runnerKind{{"Go wazero", wasmhost.New, wz}}
	if newWasmtime == nil {
		rep.Skipped["Go wasmtime-go"] = "benchreport was built without cgo (CGO_ENABLED=0); wasmtime-go needs cgo"
		return kinds, func() { wz.Close() }, nil
	}
	wt, err := newWasmtime(opts)
	if err != nil {
		wz.Close()
		return nil, nil, err
	}
	kinds = append(kinds, runnerKind{"Go wasmtime-go", newWasmtime, wt})
	return kinds, func() { wt.Close(); wz.Close() }, nil
}

// freshEngines opens the Go engines on new instances. Each request size is
// measured on fresh instances: an instance that served a 16 MB request
// answers small ones more slowly afterwards (the Go runtime's heap inside it
// has grown), which is not what a size's steady state looks like.
func freshEngines(opts wasmhost.Options) ([]engine, func(), error) {
	fwz, err := wasmhost.New(opts)
	if err != nil {
		return nil, nil, err
	}
	runners := []struct {
		name string
		r    *wasmhost.Runner
	}{{"wazero", fwz}}
	if newWasmtime != nil {
		fwt, err := newWasmtime(opts)
		if err != nil {
			fwz.Close()
			return nil, nil, err
		}
		runners = append(runners, struct {
			name string
			r    *wasmhost.Runner
		}{"wasmtime-go", fwt})
	}
	es := []engine{
		{"Go", "native (AssembleBytes)", core.AssembleBytes},
		{"Go", "native, reused buffer (AppendAssembleBytes)", reused(core.AppendAssembleBytes)},
	}
	for _, k := range runners {
		es = append(es, engine{"Go", k.name, k.r.AssembleBytes})
	}
	// The engines with a reused response buffer, as native's second row:
	// their ratio to it leaves out the Go heap's cost of a fresh response.
	// (After the rows above: the goals find an engine's first row.)
	for _, k := range runners {
		es = append(es, engine{"Go", k.name + ", reused buffer (AppendAssembleBytes)", reused(k.r.AppendAssembleBytes)})
	}
	return es, func() {
		for _, k := range runners {
			k.r.Close()
		}
	}, nil
}

// reused is an append function called with one buffer of its own, reused
// from call to call (the answer is valid until the next call).
func reused(appendTo func(dst, request []byte) []byte) func([]byte) []byte {
	var buf []byte
	return func(b []byte) []byte { buf = appendTo(buf[:0], b); return buf }
}

// writeRequests writes the shared request files to dir (every request of
// benchreq.Set and addstep.msgpack, for the Python and Node benchmarks) and
// returns the planned requests' bytes and their response sizes by name.
func writeRequests(p plan, dir string) (map[string][]byte, map[string]int, error) {
	// addstep.msgpack: the base of the add_step figures (React(0, 1024)) with
	// the one 1 KB step every host adds.
	if err := os.WriteFile(filepath.Join(dir, "addstep.msgpack"), core.EncodeRequest(benchreq.React(1, 1024)), 0o644); err != nil {
		return nil, nil, err
	}
	reqs := map[string][]byte{}
	resps := map[string]int{}
	for _, n := range benchreq.Set() {
		b := core.EncodeRequest(n.Request)
		if err := os.WriteFile(filepath.Join(dir, n.Name+".msgpack"), b, 0o644); err != nil {
			return nil, nil, err
		}
		if !slices.Contains(p.Requests, n.Name) {
			continue
		}
		reqs[n.Name] = b
		resps[n.Name] = len(core.AssembleBytes(b))
	}
	return reqs, resps, nil
}

// measureAssemble measures every Go engine on each planned request, side by
// side on fresh instances, after checking that each answers native's bytes.
func measureAssemble(rep *Report, p plan, opts wasmhost.Options, reqs map[string][]byte, resps map[string]int) error {
	for _, name := range p.Requests {
		req := reqs[name]
		engines, closeEngines, err := freshEngines(opts)
		if err != nil {
			return err
		}
		want := core.AssembleBytes(req)
		for _, e := range engines {
			if got := e.call(req); !bytes.Equal(got, want) {
				closeEngines()
				return fmt.Errorf("%s answers %s differently from native", e.name, name)
			}
		}
		samples := make([][]float64, len(engines))
		calls := make([]int, len(engines))
		for i, e := range engines {
			calls[i] = batchSize(func() { e.call(req) }, p.SampleSec)
		}
		for range p.Samples {
			for i, e := range engines {
				samples[i] = append(samples[i], timeBatch(func() { e.call(req) }, calls[i]))
			}
		}
		for i, e := range engines {
			rep.Assemble = append(rep.Assemble, Row{Host: e.host, Engine: e.name, Request: name, RequestB: len(req), ResponseB: resps[name], Time: stat(samples[i], calls[i])})
		}
		closeEngines()
	}
	return nil
}

// measureMemory records the peak linear memory of a fresh instance per
// request and engine, after one call.
func measureMemory(rep *Report, p plan, kinds []runnerKind, opts wasmhost.Options, reqs map[string][]byte) error {
	for _, name := range p.Requests {
		for _, k := range kinds {
			r, err := k.new(opts)
			if err != nil {
				return err
			}
			r.AssembleBytes(reqs[name])
			rep.Memory = append(rep.Memory, MemRow{k.host, name, r.PeakMemoryBytes()})
			r.Close()
		}
	}
	return nil
}

// measureAddStepGo measures add_step against the history length natively
// and through wazero's runner wz.
func measureAddStepGo(rep *Report, p plan, wz *wasmhost.Runner) {
	rep.AddStep = append(rep.AddStep, addStepGo(p, "Go native (core.Prompt)", func(r *core.Request) (func(string, string) error, error) {
		pr, err := core.NewPrompt(r)
		if err != nil {
			return nil, err
		}
		return pr.AddStep, nil
	})...)
	rep.AddStep = append(rep.AddStep, addStepGo(p, "Go wazero (wasmhost.Prompt)", func(r *core.Request) (func(string, string) error, error) {
		pr, err := wz.NewPrompt(r)
		if err != nil {
			return nil, err
		}
		return pr.AddStep, nil
	})...)
}

// measureStartup measures, per engine, a cold compile (no cache), a first
// call with a warm cache (load, instantiate, the tiny request) and an
// instantiation.
func measureStartup(rep *Report, p plan, kinds []runnerKind, wasm []byte, cache string, tiny []byte) error {
	for _, k := range kinds {
		var cold, warm, inst []float64
		for range p.Cold {
			t0 := time.Now()
			r, err := k.new(wasmhost.Options{Module: wasm, CacheDir: "-"})
			if err != nil {
				return err
			}
			cold = append(cold, time.Since(t0).Seconds())
			r.Close()
		}
		for range p.Samples {
			t0 := time.Now()
			r, err := k.new(wasmhost.Options{Module: wasm, CacheDir: cache})
			if err != nil {
				return err
			}
			r.AssembleBytes(tiny)
			warm = append(warm, time.Since(t0).Seconds())
			r.Close()
		}
		n := batchSize(func() { k.r.Instantiate() }, p.SampleSec)
		for range p.Samples {
			inst = append(inst, timeBatch(func() { k.r.Instantiate() }, n))
		}
		rep.Startup = append(rep.Startup,
			StartRow{k.host, "compile, cold (no cache)", stat(cold, 1)},
			StartRow{k.host, "first call, warm cache (load + instantiate + tiny call)", stat(warm, 1)},
			StartRow{k.host, "instantiate (+ _initialize)", stat(inst, n)})
	}
	return nil
}

// measureOthers runs the Python and Node benchmarks and the prompt preview
// in Chromium on the request files in reqDir; a host that is not given or
// whose benchmark fails is listed as skipped with the reason.
func measureOthers(rep *Report, p plan, python, node, reqDir string) {
	if python != "" {
		fmt.Fprintln(os.Stderr, "benchreport: Python (bindings/python/bench/bench.py --json)")
		if err := external(rep, p, "Python", []string{python, "bindings/python/bench/bench.py"}, reqDir); err != nil {
			rep.Skipped["Python"] = err.Error()
		}
	} else {
		rep.Skipped["Python"] = "no -python interpreter given (make bench passes the .venv of make python.venv)"
	}
	if node != "" {
		fmt.Fprintln(os.Stderr, "benchreport: Node (bindings/js/bench/bench.mjs --json)")
		if err := external(rep, p, "Node", []string{node, "bindings/js/bench/bench.mjs"}, reqDir); err != nil {
			rep.Skipped["Node"] = err.Error()
		}
	} else {
		rep.Skipped["Node"] = "no -node executable given"
	}
	if node != "" {
		fmt.Fprintln(os.Stderr, "benchreport: the prompt preview in Chromium (preview/bench/preview.mjs --json)")
		if err := runPreview(rep, p, node); err != nil {
			rep.Skipped["Chromium preview"] = err.Error()
		}
	}
}

// batchSize returns how many calls of f take about sec (at least one).
func batchSize(f func(), sec float64) int {
	f()
	t0 := time.Now()
	f()
	one := max(time.Since(t0).Seconds(), 1e-8)
	return max(1, int(sec/one))
}

// timeBatch returns the mean time of one call of f over n calls.
func timeBatch(f func(), n int) float64 {
	t0 := time.Now()
	for range n {
		f()
	}
	return time.Since(t0).Seconds() / float64(n)
}

// addStepGo times one AddStep (a 1 KB step, as benchreq's) on a prompt that
// already holds each history length of 1 KB steps.
func addStepGo(p plan, host string, newPrompt func(*core.Request) (func(string, string) error, error)) []StepRow {
	base := benchreq.React(0, 1024)
	step := benchreq.React(1, 1024).Steps[0]
	// Every history length gets its own prompt, and every round times one
	// batch on each, so a burst of load meets all lengths alike (the flat
	// goal is a ratio between them).
	adds := make([]func(), len(p.Histories))
	ns := make([]int, len(p.Histories))
	for k, h := range p.Histories {
		add, err := newPrompt(base)
		if err != nil {
			panic(err)
		}
		for range h {
			if err := add(step.RawOutput, step.Observation); err != nil {
				panic(err)
			}
		}
		adds[k] = func() { add(step.RawOutput, step.Observation) }
		ns[k] = max(1, min(batchSize(adds[k], p.SampleSec/4), 2000))
	}
	s := make([][]float64, len(p.Histories))
	for range p.Samples {
		for k := range adds {
			s[k] = append(s[k], timeBatch(adds[k], ns[k]))
		}
	}
	var rows []StepRow
	for k, h := range p.Histories {
		rows = append(rows, StepRow{host, h, stat(s[k], ns[k])})
	}
	return rows
}

// ---- Python and Node ----

// extResult is what bench.py and bench.mjs write with --json.
type extResult struct {
	Versions map[string]string `json:"versions"`
	Assemble []struct {
		Engine    string    `json:"engine"`
		Request   string    `json:"request"`
		Reference bool      `json:"reference"`
		Calls     int       `json:"calls"`
		Samples   []float64 `json:"samples_s"`
	} `json:"assemble"`
	AddStep []struct {
		History int       `json:"history"`
		Calls   int       `json:"calls"`
		Samples []float64 `json:"samples_s"`
	} `json:"add_step"`
	Startup []struct {
		Figure  string    `json:"figure"`
		Samples []float64 `json:"samples_s"`
	} `json:"startup"`
	Stages []struct {
		Request string             `json:"request"`
		Median  map[string]float64 `json:"median_s"`
	} `json:"stages"`
	Memory []struct {
		Request string `json:"request"`
		Bytes   uint64 `json:"bytes"`
	} `json:"peak_memory"`
	Throughput []struct {
		Engine    string    `json:"engine"`
		Workers   int       `json:"workers"`
		Requests  int       `json:"requests"`
		ResponseB int       `json:"response_bytes"`
		Samples   []float64 `json:"samples_s"`
	} `json:"throughput"`
}

func external(rep *Report, p plan, host string, argv []string, reqDir string) error {
	f, err := os.CreateTemp("", "benchreport-*.json")
	if err != nil {
		return err
	}
	f.Close()
	defer os.Remove(f.Name())
	hist := make([]string, len(p.Histories))
	for i, h := range p.Histories {
		hist[i] = fmt.Sprint(h)
	}
	args := append(argv[1:], "--requests", reqDir, "--names", strings.Join(p.Requests, ","),
		"--histories", strings.Join(hist, ","), "--samples", fmt.Sprint(p.Samples),
		"--sample-seconds", fmt.Sprint(p.SampleSec), "--json", f.Name())
	cmd := exec.Command(argv[0], args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s failed: %v", argv[0], strings.Join(args, " "), err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return err
	}
	var r extResult
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s wrote unreadable JSON: %v", argv[1], err)
	}
	for k, v := range r.Versions {
		rep.Versions[host+" "+k] = v
	}
	reqSize := map[string]int{}
	respSize := map[string]int{}
	for _, row := range rep.Assemble {
		reqSize[row.Request], respSize[row.Request] = row.RequestB, row.ResponseB
	}
	for _, a := range r.Assemble {
		name := a.Engine
		if a.Reference {
			name = "reference: " + name
		}
		rep.Assemble = append(rep.Assemble, Row{Host: host, Engine: name, Request: a.Request, RequestB: reqSize[a.Request], ResponseB: respSize[a.Request], Time: stat(a.Samples, a.Calls)})
	}
	for _, s := range r.AddStep {
		rep.AddStep = append(rep.AddStep, StepRow{host, s.History, stat(s.Samples, s.Calls)})
	}
	for _, s := range r.Startup {
		rep.Startup = append(rep.Startup, StartRow{host, s.Figure, stat(s.Samples, 1)})
	}
	for _, s := range r.Stages {
		rep.Stages = append(rep.Stages, StageRow{host, s.Request, s.Median})
	}
	for _, m := range r.Memory {
		rep.Memory = append(rep.Memory, MemRow{host, m.Request, m.Bytes})
	}
	for _, t := range r.Throughput {
		rep.Throughput = append(rep.Throughput, ThroughputRow{Host: host, Engine: t.Engine, Workers: t.Workers,
			Requests: t.Requests, ResponseB: t.ResponseB, Time: stat(t.Samples, 1)})
	}
	return nil
}

// ---- ratios and goals ----

// finish derives the ratios of the figures and the goal table (its lines
// in a fixed order: core, bindings, add_step, start-up).
func finish(rep *Report) {
	assembleRatios(rep)
	throughputRatios(rep)
	g := goalTable{rep}
	g.coreGoals()
	g.bindingGoals()
	g.addStepGoals()
	g.startGoals()
}

// assembleRatios fills each assemble row's MB/s and its ratios to native Go
// and to its host's reference implementation.
func assembleRatios(rep *Report) {
	native := map[string]Row{}
	ref := map[string]float64{}
	for _, r := range rep.Assemble {
		if r.Engine == "native (AssembleBytes)" {
			native[r.Request] = r
		}
		if strings.HasPrefix(r.Engine, "reference: ") {
			ref[r.Host+"/"+r.Request] = r.Time.Median
		}
	}
	for i := range rep.Assemble {
		r := &rep.Assemble[i]
		if r.Time.Median > 0 {
			r.MBps = float64(r.ResponseB) / 1e6 / r.Time.Median
			n := native[r.Request]
			r.VsNative = r.Time.Median / n.Time.Median
			// The Go engines are measured round by round beside native (one
			// sample of each per round): their ratio is taken round by round.
			if med, lo, hi, ok := paired(r.Time.Samples, n.Time.Samples); ok && r.Host == n.Host {
				r.VsNative, r.VsNativeMin, r.VsNativeMax = med, lo, hi
			}
			if rt := ref[r.Host+"/"+r.Request]; rt > 0 && !strings.HasPrefix(r.Engine, "reference: ") {
				r.VsReference = r.Time.Median / rt
			}
		}
	}
}

// throughputRatios fills each throughput row's requests and MB per second
// and its scaling over the same engine with one worker (ThroughputRow.Scaling).
func throughputRatios(rep *Report) {
	one := map[string]*ThroughputRow{}
	for i := range rep.Throughput {
		t := &rep.Throughput[i]
		if t.Time.Median > 0 {
			t.PerSecond = float64(t.Requests) / t.Time.Median
			t.MBps = float64(t.ResponseB) / 1e6 / t.Time.Median
			if t.Workers == 1 {
				one[t.Host+"/"+t.Engine] = t
			}
		}
	}
	for i := range rep.Throughput {
		t := &rep.Throughput[i]
		base := one[t.Host+"/"+t.Engine]
		if base == nil || t.Time.Median == 0 {
			continue
		}
		// requests per second over the base's (a run of t takes t's time for
		// t.Requests, the base's takes its own for base.Requests)
		more := float64(t.Requests) / float64(base.Requests)
		t.Scaling = more * base.Time.Median / t.Time.Median
		if med, lo, hi, ok := paired(base.Time.Samples, t.Time.Samples); ok {
			t.Scaling, t.ScalingMin, t.ScalingMax = more*med, more*lo, more*hi
		}
	}
}

// paired is the median, lowest and highest over the rounds of a[k] / b[k],
// for two figures measured one sample each per round (ok false if their
// samples do not pair up): on a shared machine the load changes from second
// to second, and a round's two samples meet the same load.
func paired(a, b []float64) (med, lo, hi float64, ok bool) {
	if len(a) == 0 || len(a) != len(b) {
		return 0, 0, 0, false
	}
	rounds := make([]float64, len(a))
	for k := range a {
		if b[k] <= 0 {
			return 0, 0, 0, false
		}
		rounds[k] = a[k] / b[k]
	}
	st := stat(rounds, 0)
	return st.Median, st.Min, st.Max, true
}

// floor is "; <what>: F× (rounds lo – hi)": the sum of the parts' samples
// (a part named with a leading "-" subtracted), round by round, over base's,
// for a line whose goal lies below what the parts that no design can skip
// already cost (measured in the same rounds); "" when a part was not measured.
func (g goalTable) floor(base *Row, host, req, what string, parts ...string) string {
	if base == nil {
		return ""
	}
	var sum []float64
	for _, p := range parts {
		sign := 1.0
		if name, ok := strings.CutPrefix(p, "-"); ok {
			sign, p = -1, name
		}
		r := g.find(host, p, req)
		if r == nil || len(r.Time.Samples) != len(base.Time.Samples) {
			return ""
		}
		if sum == nil {
			sum = make([]float64, len(r.Time.Samples))
		}
		for k, v := range r.Time.Samples {
			sum[k] += sign * v
		}
	}
	med, lo, hi, ok := paired(sum, base.Time.Samples)
	if !ok {
		return ""
	}
	return fmt.Sprintf("; %s: %.2f× (rounds %.2f – %.2f)", what, med, lo, hi)
}

// goalTable appends the goal lines of rep's figures to rep.Goals.
type goalTable struct{ rep *Report }

// find is the assemble row of host on req whose engine contains engPrefix.
func (g goalTable) find(host, engPrefix, req string) *Row {
	for i := range g.rep.Assemble {
		r := &g.rep.Assemble[i]
		if r.Host == host && strings.Contains(r.Engine, engPrefix) && r.Request == req {
			return r
		}
	}
	return nil
}

// throughput is host's throughput row of the way whose name starts with
// prefix, at w workers.
func (g goalTable) throughput(host, prefix string, w int) *ThroughputRow {
	for i := range g.rep.Throughput {
		if t := &g.rep.Throughput[i]; t.Host == host && t.Workers == w && strings.HasPrefix(t.Engine, prefix) {
			return t
		}
	}
	return nil
}

// step is host's add_step row at history length h.
func (g goalTable) step(host string, h int) *StepRow {
	for i := range g.rep.AddStep {
		if g.rep.AddStep[i].Host == host && g.rep.AddStep[i].History == h {
			return &g.rep.AddStep[i]
		}
	}
	return nil
}

// start is host's start-up row whose figure begins with prefix.
func (g goalTable) start(host, prefix string) *StartRow {
	for i := range g.rep.Startup {
		if g.rep.Startup[i].Host == host && strings.HasPrefix(g.rep.Startup[i].Figure, prefix) {
			return &g.rep.Startup[i]
		}
	}
	return nil
}

// add appends a goal line: what was reached if the figure was measured
// (row), else "not measured" and missed.
func (g goalTable) add(figure, goal string, row bool, reached func() string, met bool) {
	text := "not measured"
	if row {
		text = reached()
	} else {
		met = false
	}
	g.rep.Goals = append(g.rep.Goals, Goal{figure, goal, text, met})
}

// coreGoals: the native core's MB/s, the engines against native, the tiny
// round trip of every host.
func (g goalTable) coreGoals() {
	for _, req := range []string{"1MB", "16MB"} {
		r := g.find("Go", "native (AssembleBytes)", req)
		g.add("native core, "+req+" (MB/s of response)", "≥ 1,500 MB/s", r != nil, func() string {
			a := g.find("Go", "native, reused", req)
			return fmt.Sprintf("%.0f MB/s (reused buffer: %.0f MB/s)", r.MBps, a.MBps)
		}, r != nil && r.MBps >= 1500)
	}
	for _, e := range []string{"wazero", "wasmtime-go"} {
		r := g.find("Go", e, "1MB")
		goal := map[string]float64{"wazero": 3.5, "wasmtime-go": 2.5}[e]
		g.add(e+" vs native, 1MB", fmt.Sprintf("≤ %.1f×", goal), r != nil, func() string {
			s := fmt.Sprintf("%.2f×", r.VsNative)
			if r.VsNativeMax > 0 {
				s = fmt.Sprintf("%.2f× (rounds %.2f – %.2f)", r.VsNative, r.VsNativeMin, r.VsNativeMax)
			}
			// Beside it, the same with a reused response buffer on both
			// sides (not the goal's figure: what the Go heap adds).
			a, n := g.find("Go", e+", reused", "1MB"), g.find("Go", "native, reused", "1MB")
			if a != nil && n != nil {
				if med, _, _, ok := paired(a.Time.Samples, n.Time.Samples); ok {
					s += fmt.Sprintf("; reused buffers on both sides: %.2f×", med)
				}
			}
			return s
		}, r != nil && r.VsNative <= goal)
	}
	for _, t := range []struct {
		host, eng, label string
		goal             float64
	}{{"Go", "wazero", "wazero", 10e-6}, {"Go", "wasmtime-go", "wasmtime-go", 7e-6}, {"Python", "assemble_bytes", "Python", 12e-6}, {"Node", "assembleBytes", "Node", 8e-6}} {
		r := g.find(t.host, t.eng, "tiny")
		g.add("tiny round trip, "+t.label, fmt.Sprintf("≤ %.0f µs", t.goal*1e6), r != nil, func() string { return fmt.Sprintf("%.1f µs", r.Time.Median*1e6) }, r != nil && r.Time.Median <= t.goal)
	}
}

// bindingGoals: the bindings' own conversions (Python's dict, JS's object),
// the throughput with several workers, Python against its reference.
func (g goalTable) bindingGoals() {
	if r, h := g.find("Python", "assemble(dict)", "typical"), g.find("Python", "built by hand", "typical"); true {
		g.add("Python assemble(dict) vs the same message lists built by hand, typical", "≤ 1.0×", r != nil && h != nil, func() string {
			s := fmt.Sprintf("%.2f× (%.1f µs vs %.1f µs)", r.Time.Median/h.Time.Median, r.Time.Median*1e6, h.Time.Median*1e6)
			return s + g.floor(h, "Python", "typical", "floor (packing the request, assemble_bytes, joining the new texts and making the answer's containers, each alone)",
				"wasmtime, assemble_bytes", "floor part: the request packed", "floor part: the answer's containers", "floor part: the answer's new texts")
		}, r != nil && h != nil && r.Time.Median <= h.Time.Median)
	}
	for _, t := range g.rep.Throughput {
		if t.Workers > 1 && !t.Control() {
			share := 0.9 // of each added worker; Python's threads: 0.8 (one GIL hand-off per call)
			if strings.HasPrefix(t.Engine, "assemble") {
				share = 0.8
			}
			want := share * float64(t.Workers)
			g.add(fmt.Sprintf("%s, %d workers vs 1, typical", t.Engine, t.Workers), fmt.Sprintf("≥ %.1f× (%.1f × N)", want, share), t.Scaling > 0,
				func() string {
					s := fmt.Sprintf("%.2f×", t.Scaling)
					if t.ScalingMax > 0 {
						s = fmt.Sprintf("%.2f× (rounds %.2f – %.2f)", t.Scaling, t.ScalingMin, t.ScalingMax)
					}
					// Python's ways beside what the module itself gained on
					// plain threads in the same rounds (a control).
					if c := g.throughput(t.Host, "control: the module", t.Workers); c != nil && strings.HasPrefix(t.Engine, "assemble") {
						s += fmt.Sprintf("; the module alone on %d plain threads, same rounds: %.2f×", t.Workers, c.Scaling)
					}
					return s
				}, t.Scaling >= want)
		}
	}
	{
		exact := func(engine string) *Row {
			for i := range g.rep.Assemble {
				if r := &g.rep.Assemble[i]; r.Host == "Node" && r.Engine == engine && r.Request == "1MB" {
					return r
				}
			}
			return nil
		}
		b, o, c := exact("Node, assembleBytes(Uint8Array)"), exact("Node, assemble(object)"), exact("Node, assemble(object), cold string cache")
		ok := b != nil && o != nil && c != nil && b.Time.Median > 0
		g.add("JS assemble(object) vs assembleBytes, 1MB (side by side), warm and cold string cache", "≤ 1.5× both", ok, func() string {
			text := fmt.Sprintf("%.2f× (%.2f ms vs %.2f ms)", o.Time.Median/b.Time.Median, o.Time.Median*1e3, b.Time.Median*1e3)
			return text + fmt.Sprintf("; cold string cache: %.2f×", c.Time.Median/b.Time.Median) +
				g.floor(b, "Node", "1MB", "cold floor (writing the request's strings as UTF-8, the module's call, joining the new texts and making the answer's objects, each alone)",
					"floor part: the request's strings written", "floor part: the module's call", "-floor part (subtracted): the request copied in",
					"floor part: the answer's message objects", "floor part: the answer's new texts")
		}, ok && o.Time.Median/b.Time.Median <= 1.5 && c.Time.Median/b.Time.Median <= 1.5)
	}
	if r := g.find("Python", "assemble(dict)", "typical"); true {
		g.add("Python typical vs pure-Python reference", "≤ 2×", r != nil && r.VsReference > 0, func() string { return fmt.Sprintf("%.2f× (assemble(dict))", r.VsReference) }, r != nil && r.VsReference > 0 && r.VsReference <= 2)
	}
}

// addStepGoals: add_step at step 1,000, and flat against the history.
func (g goalTable) addStepGoals() {
	for _, t := range []struct {
		host string
		goal float64
	}{{"Python", 30e-6}, {"Node", 15e-6}} {
		s1, s0, sN := g.step(t.host, 1000), g.step(t.host, 10), g.step(t.host, 10000)
		flat := ""
		ok := s1 != nil && s1.Time.Median <= t.goal
		if s0 != nil && sN != nil {
			// The lengths are timed in the same rounds: the ratio is paired
			// round by round, like the engines' ratios to native.
			ratio, lo, hi, isPaired := paired(sN.Time.Samples, s0.Time.Samples)
			if !isPaired {
				ratio = sN.Time.Median / s0.Time.Median
				flat = fmt.Sprintf("; step 10,000 / step 10 = %.2f", ratio)
			} else {
				flat = fmt.Sprintf("; step 10,000 / step 10 = %.2f (rounds %.2f – %.2f)", ratio, lo, hi)
			}
			ok = ok && ratio <= 1.5
		}
		g.add("add_step at step 1,000 (1 KB steps), "+t.host, fmt.Sprintf("≤ %.0f µs, flat", t.goal*1e6), s1 != nil, func() string { return fmt.Sprintf("%.1f µs%s", s1.Time.Median*1e6, flat) }, ok)
	}
}

// startGoals: the first call with a warm cache, and the module's size.
func (g goalTable) startGoals() {
	for _, t := range []struct {
		host string
		goal float64
	}{{"Python", 0.030}, {"Node", 0.050}, {"Go wazero", 0.150}} {
		s := g.start(t.host, "first call, warm cache")
		if t.host == "Python" {
			// Issue 4 measures the first call after import; the figure with
			// the import (of wasmtime, mostly) is given beside it.
			after := g.start(t.host, "first call alone, warm cache")
			g.add("first call after import, warm cache, Python", fmt.Sprintf("≤ %.0f ms", t.goal*1e3), after != nil, func() string {
				with := ""
				if s != nil {
					with = fmt.Sprintf(" (new process, import included: %.1f ms)", s.Time.Median*1e3)
				}
				return fmt.Sprintf("%.1f ms%s", after.Time.Median*1e3, with)
			}, after != nil && after.Time.Median <= t.goal)
			continue
		}
		g.add("first call, warm cache, "+t.host, fmt.Sprintf("≤ %.0f ms", t.goal*1e3), s != nil, func() string { return fmt.Sprintf("%.1f ms", s.Time.Median*1e3) }, s != nil && s.Time.Median <= t.goal)
	}
	g.add("module size, gzip -9", "≤ 850 KB (850,000 B)", true, func() string { return fmt.Sprintf("%d B (raw %d B)", g.rep.Module["gzip"], g.rep.Module["raw"]) }, g.rep.Module["gzip"] <= 850_000)
}

// ---- machine and versions ----

func machine() map[string]string {
	m := map[string]string{"nproc": fmt.Sprint(runtime.NumCPU()), "os/arch": runtime.GOOS + "/" + runtime.GOARCH, "load average (start)": loadavg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				m["cpu"] = strings.TrimSpace(l[strings.IndexByte(l, ':')+1:])
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m["memory"] = strings.Join(strings.Fields(strings.SplitN(string(b), "\n", 2)[0])[1:], " ")
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func versions() map[string]string {
	v := map[string]string{"Go": runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/tetratelabs/wazero", "github.com/bytecodealliance/wasmtime-go/v39", "github.com/tinylib/msgp":
				v[d.Path] = d.Version
			}
		}
	}
	return v
}
