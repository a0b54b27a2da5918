package hosttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wirejson"
)

// The typed caching facades, used as a Go user uses them (this file packs
// no msgpack and names no call): Runner.CacheReport and Runner.Export on
// wazero and wasmtime give what the core gives natively (core.CacheReportOf,
// core.Export), their errors the same *core.Error.

// cachingRun is a run of calls: each call one step more; call 3 rewrites
// the system message; call 4 is no request.
func cachingRun() [][]byte {
	msg := func(role, text string) core.Message {
		return core.Message{Role: role, Content: []core.Block{{Type: core.BlockTypeText, Text: text}}}
	}
	var out [][]byte
	for i := range 6 {
		req := &core.Request{
			RunMessages:         []core.Message{msg(core.RoleSystem, "You are terse.")},
			Injections:          map[string][]core.Injection{"memory": {{EntryID: "m1", Content: "Prefer metric units."}}},
			GoalMessages:        []core.Message{msg(core.RoleUser, "Find the price.")},
			ObservationTemplate: "Observation: {observation}",
		}
		if i >= 3 {
			req.RunMessages[0] = msg(core.RoleSystem, "You are terse and exact.")
		}
		for s := range i + 1 {
			req.Steps = append(req.Steps, core.Step{RawOutput: "look(" + string(rune('a'+s)) + ")", Observation: "seen é"})
		}
		out = append(out, core.EncodeRequest(req))
	}
	out[4] = []byte(`{"steps": []}`) // JSON text, no template: the call's missing_field
	return out
}

type anthropicUsage struct {
	CacheRead int64 `json:"cache_read_input_tokens"`
	Input     int64 `json:"input_tokens"`
}

func TestTypedCacheReportEveryEngine(t *testing.T) {
	run := cachingRun()
	usage := []any{
		nil,
		anthropicUsage{CacheRead: 40, Input: 9},
		map[string]any{"prompt_tokens_details": map[string]any{"cached_tokens": 0}},
		json.RawMessage(`{"usage": {"input_tokens_details": {"cached_tokens": 0}}}`),
		nil,
		map[string]any{"prompt_cache_hit_tokens": 7},
	}
	counts := func(ns ...int64) []*int64 {
		out := make([]*int64, len(ns))
		for i, n := range ns {
			if n >= 0 {
				out[i] = &n
			}
		}
		return out
	}
	valid := append(append([][]byte{}, run[:4]...), run[5]) // natively: msgpack only, the invalid call left out
	native := core.CacheReportOf(valid, counts(-1, 40, 0, 0, 7))
	for _, r := range runners {
		rep, err := r.CacheReport(run, usage)
		if err != nil {
			t.Fatalf("%s: %v", r.Engine(), err)
		}
		if e := rep.Calls[4].Err; e == nil || e.Code != core.CodeMissingField || e.Path != "observation_template" {
			t.Errorf("%s: call 4's error %+v, want missing_field at observation_template", r.Engine(), e)
		}
		if c := rep.Calls[3]; c.Break == nil || c.Break.Cause != core.CauseRun || c.Usage.Class != core.UsagePrefixBreak {
			t.Errorf("%s: call 3 %+v, want a run_changed break and a prefix_break", r.Engine(), c)
		}
		if c := rep.Calls[2]; !c.Extends || c.Usage.Class != core.UsageProviderMiss {
			t.Errorf("%s: call 2 %+v, want an extension and a provider_miss", r.Engine(), c)
		}
		if c := rep.Calls[5]; c.Previous != 3 || c.Usage.Class != core.UsageHit || c.Usage.CachedTokens != 7 {
			t.Errorf("%s: call 5 %+v, want compared with call 3 and a hit of 7", r.Engine(), c)
		}
		// Without the invalid call, the decoded report is the native one.
		rep.Calls = append(rep.Calls[:4], rep.Calls[5])
		rep.Calls[4].Previous = 3
		if got, want := rep.AppendJSON(nil), native.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("%s: the report differs from native:\n got %s\nwant %s", r.Engine(), got, want)
		}
		if tot := rep.Totals(); tot.Calls != 5 || tot.Breaks != 1 || tot.CacheableShare <= 0 || tot.CacheableShare >= 1 {
			t.Errorf("%s: totals %+v", r.Engine(), tot)
		}
	}
}

func TestTypedCacheReportErrorsEveryEngine(t *testing.T) {
	run := cachingRun()[:2]
	for _, r := range runners {
		rep, err := r.CacheReport(run, []any{nil, func() {}})
		if err != nil {
			t.Fatalf("%s: %v", r.Engine(), err)
		}
		if u := rep.Calls[1].Usage; u == nil || u.Class != core.UsageInvalid || u.Err == nil || u.Err.Code != core.CodeMalformedRequest || u.Err.Path != "usage" || !strings.Contains(u.Err.Message, "func()") {
			t.Errorf("%s: a usage encoding/json cannot write: %+v", r.Engine(), u)
		}
		_, err = r.CacheReport(run, []any{nil})
		var e *core.Error
		if !errors.As(err, &e) || e.Code != core.CodeMalformedRequest || e.Path != "usage" || e.Message != "usage holds 1 entries for 2 requests; give one per request (nil (None in Python; null in JSON and JavaScript) where none was recorded)" {
			t.Errorf("%s: one usage for two requests: %v", r.Engine(), err)
		}
		if rep, err := r.CacheReport(nil, nil); err != nil || len(rep.Calls) != 0 || rep.Totals().Calls != 0 {
			t.Errorf("%s: no calls: %+v, %v", r.Engine(), rep, err)
		}
	}
}

func TestTypedExportEveryEngine(t *testing.T) {
	run := cachingRun()
	opts := core.DefaultExportOptions()
	opts.TTL, opts.Lookback, opts.Body = "1h", 2, []byte("\x81\xa5model\xa1m") // the body: msgpack {"model": "m"}
	late := core.EncodeRequest(&core.Request{ObservationTemplate: "{observation}", GoalMessages: []core.Message{
		{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockTypeText, Text: "u"}}},
		{Role: core.RoleSystem, Content: []core.Block{{Type: core.BlockTypeText, Text: "s"}}},
	}})
	for _, provider := range []string{core.ProviderAnthropic, core.ProviderOpenAIChat, core.ProviderOpenAIResponses, "openai"} {
		for _, o := range []*core.ExportOptions{nil, &opts, {}} {
			for _, req := range [][]byte{run[5], late} {
				native, nerr := core.Export(req, provider, o)
				var want []byte
				if nerr == nil {
					want, _, _ = wirejson.FromMsgpack(nil, native)
				}
				for _, r := range runners {
					got, err := r.Export(req, provider, o)
					if nerr != nil {
						sameErr(t, r.Engine()+" "+provider, err, nerr)
						continue
					}
					if err != nil || !bytes.Equal(got, want) || !json.Valid(got) || (o == &opts) != bytes.HasPrefix(got, []byte(`{"model":"m",`)) {
						t.Fatalf("%s %s: %v\n got %.300s\nwant %.300s", r.Engine(), provider, err, got, want)
					}
				}
			}
		}
	}
	for _, r := range runners { // JSON text, decoded into the core's body types
		text, err := r.Export([]byte(`{"run_messages":[{"role":"system","content":[{"type":"text","text":"sys"}]}],"goal_messages":[{"role":"user","content":[{"type":"text","text":"go"}]}],"observation_template":"{observation}"}`), core.ProviderAnthropic, nil)
		var b core.AnthropicBody
		if err != nil || json.Unmarshal(text, &b) != nil {
			t.Fatalf("%s: %v, %s", r.Engine(), err, text)
		}
		if len(b.System) != 1 || b.System[0].Text != "sys" || b.System[0].CacheControl == nil || len(b.Messages) != 1 || b.Messages[0].Content[0].CacheControl.Type != "ephemeral" {
			t.Errorf("%s: %+v", r.Engine(), b)
		}
	}
}
