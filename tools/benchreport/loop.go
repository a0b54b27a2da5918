package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wasmhost"
	"github.com/polyloop/assembly/wirejson"
)

// The agent loop's speed lines (issue 41), each side by side in rounds in
// its own host: Prompt.export at step 1,000 against building the same
// Anthropic body by hand from the prompt's messages, and against export of
// the equivalent request; the per-call verdict (CacheRun) at call 1,000
// of a run against call 10. Go's on wazero here; Python's and Node's by
// bindings/python/bench/loop_bench.py and bindings/js/bench/loop.mjs.

// LoopFigures are one host's ratios, each [min, median, max] over rounds.
type LoopFigures struct {
	ExportOverHand    [3]float64 `json:"export_over_hand"`
	ExportOverRequest [3]float64 `json:"export_over_request"`
	Verdict1000Over10 [3]float64 `json:"verdict_1000_over_10"`
}

// loopRequest is the benchmarks' loop request with steps.
func loopRequest(steps []core.Step) *core.Request {
	text := func(role, s string) core.Message {
		return core.Message{Role: role, Content: []core.Block{{Type: "text", Text: s}}}
	}
	return &core.Request{
		RunMessages:         []core.Message{text("system", strings.Repeat("You are a careful agent. ", 40))},
		Injections:          map[string][]core.Injection{"memory": {{EntryID: "m1", Content: "Prefer metric units."}}},
		GoalMessages:        []core.Message{text("user", "Count the files in /data.")},
		Steps:               steps,
		ObservationTemplate: "Output:\n{observation}",
	}
}

// verdictCalls is the number of calls timed from call 10 and from call
// 1,000 of a run, the Prompt one step longer at each.
const verdictCalls = 50

// pairedTimed is pairedRounds for sides that time themselves (each builds
// its run untimed, then times its calls alone).
func pairedTimed(rounds int, a, b func() time.Duration) [3]float64 {
	ratios := make([]float64, rounds)
	for i := range ratios {
		var ta, tb time.Duration
		if i%2 == 0 {
			ta, tb = a(), b()
		} else {
			tb, ta = b(), a()
		}
		ratios[i] = float64(tb) / float64(ta)
	}
	slices.Sort(ratios)
	return [3]float64{ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1]}
}

func loopSteps() []core.Step {
	steps := make([]core.Step, 1000+verdictCalls)
	for i := range steps {
		steps[i] = core.Step{RawOutput: fmt.Sprintf("Thought %d: list it.\nAction: ls -la /data/%d", i, i),
			Observation: strings.Repeat(fmt.Sprintf("%d files ✓\n", i*7), 8)}
	}
	return steps
}

// byHand is the Anthropic body a Go user writes from the prompt's
// messages, as JSON: system, messages, the last block marked.
func byHand(resp *core.Response) []byte {
	type block struct {
		Type         string            `json:"type"`
		Text         string            `json:"text"`
		CacheControl map[string]string `json:"cache_control,omitempty"`
	}
	type message struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	var body struct {
		System   []block   `json:"system"`
		Messages []message `json:"messages"`
	}
	i := 0
	for ; i < len(resp.Messages) && resp.Messages[i].Role == "system"; i++ {
		for _, b := range resp.Messages[i].Content {
			body.System = append(body.System, block{Type: "text", Text: b.Text})
		}
	}
	for _, m := range resp.Messages[i:] {
		msg := message{Role: m.Role}
		for _, b := range m.Content {
			msg.Content = append(msg.Content, block{Type: "text", Text: b.Text})
		}
		body.Messages = append(body.Messages, msg)
	}
	last := body.Messages[len(body.Messages)-1].Content
	last[len(last)-1].CacheControl = map[string]string{"type": "ephemeral"}
	out, _ := json.Marshal(body)
	return out
}

// measureLoopGo is Go's figures, on r (wazero).
func measureLoopGo(p plan, r *wasmhost.Runner) (*LoopFigures, error) {
	steps := loopSteps()
	pr, err := r.NewPrompt(loopRequest(nil))
	if err != nil {
		return nil, err
	}
	for _, s := range steps[:1000] {
		if err := pr.AddStep(s.RawOutput, s.Observation); err != nil {
			return nil, err
		}
	}
	equivalent := loopRequest(steps[:1000])
	var f LoopFigures
	rounds := p.Samples
	f.ExportOverHand = pairedRounds(rounds, func() { byHand(pr.Response()) }, func() { _, _ = pr.Export(core.ProviderAnthropic, nil) })
	f.ExportOverRequest = pairedRounds(rounds, func() { _, _ = r.Export(core.EncodeRequest(equivalent), core.ProviderAnthropic, nil) },
		func() { _, _ = pr.Export(core.ProviderAnthropic, nil) })
	usage := []byte(`{"cache_read_input_tokens":100}`)
	verdicts := func(from int) func() time.Duration {
		return func() time.Duration {
			pp, _ := r.NewPrompt(loopRequest(nil))
			run := r.NewCacheRun()
			for _, s := range steps[:from] {
				_ = pp.AddStep(s.RawOutput, s.Observation)
				_, _ = run.CallPrompt(pp, usage)
			}
			var took time.Duration
			for _, s := range steps[from : from+verdictCalls] {
				_ = pp.AddStep(s.RawOutput, s.Observation)
				t := time.Now()
				_, _ = run.CallPrompt(pp, usage)
				took += time.Since(t)
			}
			return took
		}
	}
	f.Verdict1000Over10 = pairedTimed(rounds, verdicts(10), verdicts(1000))
	return &f, nil
}

// measureLoopNative is Go's figures on the native core: Prompt.AppendExport
// written as JSON (wirejson) against the body built by hand and against
// core.Export of the request, and core.CacheRun.
func measureLoopNative(p plan) (*LoopFigures, error) {
	steps := loopSteps()
	pr, err := core.NewPrompt(loopRequest(nil))
	if err != nil {
		return nil, err
	}
	for _, s := range steps[:1000] {
		if err := pr.AddStep(s.RawOutput, s.Observation); err != nil {
			return nil, err
		}
	}
	equivalent := loopRequest(steps[:1000])
	var body, text []byte
	export := func() {
		body, _ = pr.AppendExport(body[:0], core.ProviderAnthropic, nil)
		text, _, _ = wirejson.FromMsgpack(text[:0], body)
	}
	var f LoopFigures
	rounds := p.Samples
	f.ExportOverHand = pairedRounds(rounds, func() { byHand(pr.Response()) }, export)
	f.ExportOverRequest = pairedRounds(rounds, func() {
		b, _ := core.Export(core.EncodeRequest(equivalent), core.ProviderAnthropic, nil)
		text, _, _ = wirejson.FromMsgpack(text[:0], b)
	}, export)
	usage := []byte{0x81, 0xb7}
	usage = append(append(usage, "cache_read_input_tokens"...), 0x64)
	verdicts := func(from int) func() time.Duration {
		return func() time.Duration {
			pp, _ := core.NewPrompt(loopRequest(nil))
			run := core.NewCacheRun()
			for _, s := range steps[:from] {
				_ = pp.AddStep(s.RawOutput, s.Observation)
				run.CallPrompt(pp, usage)
			}
			var took time.Duration
			for _, s := range steps[from : from+verdictCalls] {
				_ = pp.AddStep(s.RawOutput, s.Observation)
				t := time.Now()
				run.CallPrompt(pp, usage)
				took += time.Since(t)
			}
			return took
		}
	}
	f.Verdict1000Over10 = pairedTimed(rounds, verdicts(10), verdicts(1000))
	return &f, nil
}

// measureLoop adds the loop's goals: Go on wazero, then Python and Node.
func measureLoop(rep *Report, p plan, r *wasmhost.Runner, python, node string) {
	figures := map[string]*LoopFigures{}
	fmt.Fprintln(os.Stderr, "benchreport: the agent loop (Go wazero, bindings/python/bench/loop_bench.py, bindings/js/bench/loop.mjs)")
	if f, err := measureLoopNative(p); err == nil {
		figures["Go (native)"] = f
	} else {
		rep.Skipped["loop, Go native"] = err.Error()
	}
	if f, err := measureLoopGo(p, r); err == nil {
		figures["Go (wazero)"] = f
	} else {
		rep.Skipped["loop, Go"] = err.Error()
	}
	for _, h := range []struct{ host, exe, script string }{{"Python", python, "bindings/python/bench/loop_bench.py"}, {"Node", node, "bindings/js/bench/loop.mjs"}} {
		if h.exe == "" {
			rep.Skipped["loop, "+h.host] = "no interpreter given"
			continue
		}
		var f LoopFigures
		if err := runJSON(h.exe, []string{h.script, "--json"}, p.Quick, &f); err != nil {
			rep.Skipped["loop, "+h.host] = err.Error()
			continue
		}
		figures[h.host] = &f
	}
	g := goalTable{rep}
	show := func(r [3]float64) string { return fmt.Sprintf("%.2f× (rounds %.2f – %.2f)", r[1], r[0], r[2]) }
	for _, host := range []string{"Go (native)", "Go (wazero)", "Python", "Node"} {
		f := figures[host]
		g.add("Prompt.export at step 1,000 vs the body built by hand from its messages, "+host, "≤ 1.5×", f != nil,
			func() string { return show(f.ExportOverHand) }, f != nil && f.ExportOverHand[1] <= 1.5)
		g.add("Prompt.export at step 1,000 vs export of the equivalent request, "+host, "≤ 0.25×", f != nil,
			func() string { return show(f.ExportOverRequest) }, f != nil && f.ExportOverRequest[1] <= 0.25)
		g.add("the verdict at call 1,000 vs call 10 (CacheRun), "+host, "≤ 1.5×", f != nil,
			func() string { return show(f.Verdict1000Over10) }, f != nil && f.Verdict1000Over10[1] <= 1.5)
	}
}
