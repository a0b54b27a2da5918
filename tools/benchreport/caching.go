package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	plumbing "github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/wasmhost"
)

// The speed of prompt caching made visible (docs/SPEC.md §7.12, §7.13), in
// the module under wazero as the bindings run it, each figure side by side
// with what it is held against, round by round: the cache report over a
// run's calls against assembling the same calls one by one (the report
// assembles each call once and compares it with the previous one), and the
// export of the typical request against assembling it.

// cachingCalls is the number of calls of 20 steps in the measured run.
func cachingCalls(p plan) int {
	if p.Quick {
		return 1000
	}
	return 10000
}

// measureCaching adds the two goals; r is the wazero runner.
func measureCaching(rep *Report, p plan, r *wasmhost.Runner) {
	n := cachingCalls(p)
	// A run: call i is the typical request with its steps cut to i%20+1,
	// so the prompts extend and break (every 20th call starts over).
	full := benchreq.Typical()
	calls := make([][]byte, n)
	for i := range calls {
		req := *full
		req.Steps = full.Steps[:i%len(full.Steps)+1]
		calls[i] = core.EncodeRequest(&req)
	}
	report := msgp.AppendArrayHeader(msgp.AppendString(msgp.AppendMapHeader(nil, 2), "requests"), uint32(n))
	for _, c := range calls {
		report = append(report, c...)
	}
	report = msgp.AppendNil(msgp.AppendString(report, "usage"))

	var buf []byte
	assembleAll := func() {
		for _, c := range calls {
			buf = r.AppendCall(abi.CallAssemble, buf[:0], c)
		}
	}
	reportOnce := func() { buf = r.AppendCall(abi.CallCacheReport, buf[:0], report) }
	rounds := p.Samples
	rate := pairedRounds(rounds, assembleAll, reportOnce) // report time / assemble time
	g := goalTable{rep}
	g.add(fmt.Sprintf("cache report over %s calls of 1–20 steps vs assembling them, wazero (rate)", groupInt(n)), "≥ 0.5×", true, func() string {
		return fmt.Sprintf("%.2f× (rounds %.2f – %.2f)", 1/rate[1], 1/rate[2], 1/rate[0])
	}, 1/rate[1] >= 0.5)
	fmt.Fprintf(os.Stderr, "benchreport: caching: report/assemble %.2f\n", rate[1])
	measureExports(rep, p, r)
}

// measureExports adds a goal per export row: its time over assemble's on
// the typical request, under wazero (r).
func measureExports(rep *Report, p plan, r *wasmhost.Runner) {
	typical := core.EncodeRequest(benchreq.Typical())
	g := goalTable{rep}
	for _, e := range exportRows {
		over := exportVsAssemble(r, p, typical, e.provider, e.options)
		g.add("export ("+e.name+") vs assemble, typical, wazero", "≤ 1.10×", true, func() string {
			return fmt.Sprintf("%.2f× (rounds %.2f – %.2f)", over[1], over[0], over[2])
		}, over[1] <= 1.10)
		fmt.Fprintf(os.Stderr, "benchreport: caching: export (%s)/assemble %.2f\n", e.name, over[1])
	}
}

// exportRows are the exports measured against assembling the typical
// request: each provider, and each option that changes the body's shape.
var exportRows = []struct{ name, provider, options string }{
	{"anthropic", "anthropic", ""},
	{"openai-chat", "openai-chat", ""},
	{"openai-chat, explicit breakpoints", "openai-chat", "explicit_breakpoints"},
	{"openai-responses", "openai-responses", ""},
	{"openai-responses, explicit breakpoints", "openai-responses", "explicit_breakpoints"},
	{"openrouter", "openrouter", ""},
	{"bedrock-converse", "bedrock-converse", ""},
	{"gemini", "gemini", ""},
	{"gemini-cache", "gemini-cache", ""},
	{"gemini, cached_content", "gemini", "cached_content"},
}

// exportVsAssemble is the min, median and max over 50 × p.Samples paired rounds of the
// export's time over assemble's on typical; option, when not "", is given
// (true, or a cache's name).
func exportVsAssemble(r *wasmhost.Runner, p plan, typical []byte, provider, option string) [3]float64 {
	export := msgp.AppendBytes(msgp.AppendString(msgp.AppendMapHeader(nil, 3), "request"), typical)
	export = msgp.AppendString(msgp.AppendString(export, "provider"), provider)
	export = msgp.AppendString(export, "options")
	switch option {
	case "":
		export = msgp.AppendNil(export)
	case "cached_content":
		export = msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(export, 1), option), "cachedContents/bench")
	default:
		export = msgp.AppendBool(msgp.AppendString(msgp.AppendMapHeader(export, 1), option), true)
	}
	// Many short rounds (20 calls a side, about 1 ms): the load of a shared
	// machine changes within a long round, and lands on one side of it only.
	var buf []byte
	const k = 20
	return pairedRounds(50*p.Samples, func() {
		for range k {
			buf = r.AppendCall(abi.CallAssemble, buf[:0], typical)
		}
	}, func() {
		for range k {
			buf = r.AppendCall(abi.CallExport, buf[:0], export)
		}
	})
}

// pairedRounds times a and b once per round, alternating which goes
// first, and returns the min, median and max of the rounds' b/a.
func pairedRounds(rounds int, a, b func()) [3]float64 {
	a()
	b() // warm both
	ratios := make([]float64, rounds)
	for i := range ratios {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		t2 := time.Now()
		ta, tb := t1.Sub(t0), t2.Sub(t1)
		if i%2 == 1 {
			ta, tb = tb, ta
		}
		ratios[i] = float64(tb) / float64(ta)
	}
	slices.Sort(ratios)
	return [3]float64{ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1]}
}

func groupInt(n int) string {
	if n >= 1000 {
		return fmt.Sprintf("%d,%03d", n/1000, n%1000)
	}
	return fmt.Sprint(n)
}

// onlyExports measures the export rows alone (-only export), on a wazero
// runner of the built module: a report of their goals and nothing else.
func onlyExports(p plan) (*Report, error) {
	rep := newReport(p)
	wasm, err := plumbing.LoadModule(plumbing.Config{})
	if err != nil {
		return nil, err
	}
	rep.Module["raw"], rep.Module["gzip"] = len(wasm), gzipSize(wasm)
	r, err := wasmhost.New(wasmhost.Options{Module: wasm, MaxInstances: 1})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fmt.Fprintf(os.Stderr, "benchreport: export rows only (Go wazero), module %d B gzipped\n", rep.Module["gzip"])
	measureExports(rep, p, r)
	return rep, nil
}

// printOnly measures the group of figures only names and prints its goals.
func printOnly(p plan, only string) {
	if only != "export" {
		fmt.Fprintf(os.Stderr, "benchreport: -only %q: the one group is export\n", only)
		os.Exit(2)
	}
	rep, err := onlyExports(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	for _, g := range rep.Goals {
		fmt.Printf("%-62s %-8s %-28s %v\n", g.Figure, g.Goal, g.Reached, g.Met)
	}
}
