package hosttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wasmhost"
	"github.com/polyloop/assembly/wirejson"
)

// loopRequest is the loop's request with its steps and injection memo.
func loopRequest(steps []core.Step, memo string) *core.Request {
	text := func(role, s string) core.Message {
		return core.Message{Role: role, Content: []core.Block{{Type: "text", Text: s}}}
	}
	return &core.Request{
		RunMessages:         []core.Message{text("system", "You are a careful agent.")},
		Injections:          map[string][]core.Injection{"memory": {{EntryID: "m1", Content: memo}}},
		GoalMessages:        []core.Message{text("user", "Count the files in /data, café.")},
		Steps:               append([]core.Step(nil), steps...),
		ObservationTemplate: "Output:\n{observation}",
	}
}

// TestLoopEveryEngine is the agent loop end to end on wazero and
// wasmtime-go (issue 41): 40 calls on a Prompt, condensed at call 20, an
// injection edited at call 30, a provider miss planted at call 35. Each
// call's verdict as it happens (wasmhost.CacheRun.CallPrompt) equals its
// entry of cache_report over the recorded requests and usage, and the
// Prompt's export equals the export of the equivalent request.
func TestLoopEveryEngine(t *testing.T) {
	for _, r := range runners {
		t.Run(r.Engine(), func(t *testing.T) { loop(t, r) })
	}
}

func loop(t *testing.T, r *wasmhost.Runner) {
	var steps []core.Step
	memo := "Prefer metric units."
	p, err := r.NewPrompt(loopRequest(nil, memo))
	if err != nil {
		t.Fatal(err)
	}
	run := r.NewCacheRun()
	var verdicts []json.RawMessage
	reqs := `{"requests":[`
	usage := `,"usage":[`
	for call := range 40 {
		switch call {
		case 20:
			steps = append([]core.Step{{RawOutput: "Summary of steps 0-14.", Observation: "condensed"}}, steps[15:]...)
		case 30:
			memo = "Prefer imperial units."
		}
		if call == 20 || call == 30 {
			if p, err = r.NewPrompt(loopRequest(steps, memo)); err != nil {
				t.Fatal(err)
			}
		} else if call > 0 {
			s := core.Step{RawOutput: fmt.Sprintf("Thought %d.\nAction: ls /data/%d", call, call), Observation: fmt.Sprintf("%d files ✓", call*7)}
			if err := p.AddStep(s.RawOutput, s.Observation); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, s)
		}
		cached := 500
		if call == 0 || call == 20 || call == 30 || call == 35 {
			cached = 0
		}
		u := fmt.Sprintf(`{"usage":{"input_tokens":900,"cache_read_input_tokens":%d}}`, cached)
		v, err := run.CallPrompt(p, []byte(u))
		if err != nil {
			t.Fatal(err)
		}
		verdicts = append(verdicts, v)
		req, _ := json.Marshal(wireRequest(loopRequest(steps, memo)))
		reqs += map[bool]string{true: "", false: ","}[call == 0] + string(req)
		usage += map[bool]string{true: "", false: ","}[call == 0] + u
		if call == 10 || call == 39 {
			for _, provider := range []string{core.ProviderAnthropic, core.ProviderOpenAIChat, core.ProviderOpenAIResponses} {
				got, err := p.Export(provider, nil)
				if err != nil {
					t.Fatal(err)
				}
				args := fmt.Sprintf(`{"request":%s,"provider":%q,"options":null}`, req, provider)
				msg, jerr := wirejson.ToMsgpack(nil, []byte(args))
				if jerr != nil {
					t.Fatal(jerr)
				}
				want, _, _ := wirejson.FromMsgpack(nil, wirejson.AppendExport(nil, msg))
				if !bytes.Equal(got, want) {
					t.Fatalf("call %d, %s: Prompt.Export\n%s\nexport of the request\n%s", call, provider, got, want)
				}
			}
		}
	}
	msg, err := wirejson.ToMsgpack(nil, []byte(reqs+"]"+usage+"]}"))
	if err != nil {
		t.Fatal(err)
	}
	whole := wirejson.AppendCacheReport(nil, msg)
	var want struct {
		Calls []json.RawMessage `json:"calls"`
	}
	if err := json.Unmarshal(whole, &want); err != nil || len(want.Calls) != 40 {
		t.Fatalf("cache_report: %v %.300s", err, whole)
	}
	var breaks []int
	for i, v := range verdicts {
		if !bytes.Equal(v, want.Calls[i]) {
			t.Fatalf("call %d: verdict\n%s\ncache_report\n%s", i, v, want.Calls[i])
		}
		var e struct {
			Break *struct{ Cause string }
			Usage struct{ Class string }
		}
		_ = json.Unmarshal(v, &e)
		if e.Break != nil {
			breaks = append(breaks, i)
		}
		if i == 35 && e.Usage.Class != core.UsageProviderMiss {
			t.Fatalf("call 35: class %q, want provider_miss", e.Usage.Class)
		}
	}
	if fmt.Sprint(breaks) != "[20 30]" {
		t.Fatalf("breaks at calls %v, want [20 30]", breaks)
	}
	if rep, err := run.Report(); err != nil || !bytes.Equal(rep, whole) {
		t.Fatalf("Report: %v\n%s\ncache_report\n%s", err, rep, whole)
	}
	// The Prompt's form goes wherever a request does: a comparison with the
	// equivalent request finds them identical, natively and in the module.
	native, _ := core.NewPrompt(loopRequest(steps, memo))
	for _, form := range [][]byte{p.Form(), native.AppendForm(nil)} {
		c := r.Compare(msgpBin(form), core.EncodeRequest(loopRequest(steps, memo)))
		if !bytes.HasPrefix(c, []byte(`{"identical":true`)) {
			t.Fatalf("compare of the Prompt's form with its request: %.300s", c)
		}
	}
}

// msgpBin is b in a msgpack bin (a host's bytes, judged on their own).
func msgpBin(b []byte) []byte {
	out := []byte{0xc6, byte(len(b) >> 24), byte(len(b) >> 16), byte(len(b) >> 8), byte(len(b))}
	return append(out, b...)
}

// wireRequest is req as the JSON object the wire takes (snake_case keys).
func wireRequest(req *core.Request) map[string]any {
	msgs := func(ms []core.Message) []any {
		out := []any{}
		for _, m := range ms {
			blocks := []any{}
			for _, b := range m.Content {
				blocks = append(blocks, map[string]any{"type": b.Type, "text": b.Text})
			}
			out = append(out, map[string]any{"role": m.Role, "content": blocks})
		}
		return out
	}
	inj := map[string]any{}
	for ch, es := range req.Injections {
		l := []any{}
		for _, e := range es {
			l = append(l, map[string]any{"entry_id": e.EntryID, "content": e.Content})
		}
		inj[ch] = l
	}
	steps := []any{}
	for _, s := range req.Steps {
		steps = append(steps, map[string]any{"raw_output": s.RawOutput, "observation": s.Observation})
	}
	return map[string]any{"run_messages": msgs(req.RunMessages), "injections": inj, "goal_messages": msgs(req.GoalMessages),
		"steps": steps, "observation_template": req.ObservationTemplate}
}

// TestPromptExportAtDepths: a Prompt's export at steps 10, 100 and 1,000
// equals Runner.Export of the equivalent request, byte for byte, for every
// provider with and without options, on wazero and wasmtime-go, and equals
// the native core's (issue 41).
func TestPromptExportAtDepths(t *testing.T) {
	for _, r := range runners {
		t.Run(r.Engine(), func(t *testing.T) {
			p, err := r.NewPrompt(loopRequest(nil, "Prefer metric units."))
			if err != nil {
				t.Fatal(err)
			}
			native, _ := core.NewPrompt(loopRequest(nil, "Prefer metric units."))
			var steps []core.Step
			for _, depth := range []int{10, 100, 1000} {
				for k := len(steps); k < depth; k++ {
					s := core.Step{RawOutput: fmt.Sprintf("Thought %d: ls.\nAction: ls /data/%d", k, k), Observation: fmt.Sprintf("%d files ✓", k)}
					if err := p.AddStep(s.RawOutput, s.Observation); err != nil {
						t.Fatal(err)
					}
					_ = native.AddStep(s.RawOutput, s.Observation)
					steps = append(steps, s)
				}
				opts := core.DefaultExportOptions()
				opts.TTL, opts.Lookback, opts.CacheKey = "1h", 3, "run-7"
				for _, provider := range []string{core.ProviderAnthropic, core.ProviderOpenAIChat, core.ProviderOpenAIResponses} {
					for _, o := range []*core.ExportOptions{nil, &opts} {
						got, err := p.Export(provider, o)
						if err != nil {
							t.Fatal(err)
						}
						want, err := r.Export(core.EncodeRequest(loopRequest(steps, "Prefer metric units.")), provider, o)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("step %d, %s: Prompt.Export\n%.300s\nExport of the request\n%.300s", depth, provider, got, want)
						}
						body, _ := native.AppendExport(nil, provider, o)
						text, _, _ := wirejson.FromMsgpack(nil, body)
						if !bytes.Equal(text, want) {
							t.Fatalf("step %d, %s: native Prompt.AppendExport differs from the module's", depth, provider)
						}
					}
				}
			}
		})
	}
}

// TestCacheRunRequestBytes: a request given to CacheRun.Call as bytes is
// judged as the core judges any host's bytes: JSON text saved on Windows
// (CR LF) or indented with a tab reads as JSON, like msgpack; a BOM gets the
// verdict the command-line tool gives it, as the call's entry.
func TestCacheRunRequestBytes(t *testing.T) {
	body := `{"goal_messages":[{"role":"user","content":[{"type":"text","text":"go"}]}],"observation_template":"{observation}"}`
	for _, r := range runners {
		run := r.NewCacheRun()
		for i, text := range []string{body, "\r\n" + body + "\r\n", "\t" + body, "\ufeff" + body} {
			e, err := run.Call([]byte(text), []byte(`{"cache_read_input_tokens":0}`))
			if err != nil {
				t.Fatalf("%s, %q: %v", r.Engine(), text[:2], err)
			}
			if bad := bytes.HasPrefix(e, []byte(`{"error"`)); bad != (i == 3) {
				t.Errorf("%s, %q: entry %.200s", r.Engine(), text[:2], e)
			}
		}
		if e, _ := run.Call(core.EncodeRequest(loopRequest(nil, "m")), nil); bytes.HasPrefix(e, []byte(`{"error"`)) {
			t.Errorf("%s: msgpack request: %.200s", r.Engine(), e)
		}
	}
}
