package core_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wirejson"
)

// plantedRun is a run of calls where call i has i+1 steps; at call 50 an
// injection is edited, at 120 a run message gets a trailing space, at 170
// the history is condensed (the first 100 steps become one summary step).
func plantedRun(calls int) [][]byte {
	text := func(role, s string) core.Message {
		return core.Message{Role: role, Content: []core.Block{{Type: "text", Text: s}}}
	}
	var out [][]byte
	for i := range calls {
		sys := "You are a careful agent."
		if i >= 120 {
			sys += " "
		}
		memo := "Prefer metric units."
		if i >= 50 {
			memo = "Prefer imperial units."
		}
		var steps []core.Step
		for s := range i + 1 {
			steps = append(steps, core.Step{RawOutput: fmt.Sprintf("Thought %d.\nAction: look(%d)", s, s), Observation: fmt.Sprintf("result %d: café", s)})
		}
		if i >= 170 {
			steps = append([]core.Step{{RawOutput: "Summary of steps 0-99.", Observation: "condensed"}}, steps[100:]...)
		}
		out = append(out, core.EncodeRequest(&core.Request{
			RunMessages:         []core.Message{text("system", sys)},
			Injections:          map[string][]core.Injection{"memory": {{EntryID: "m1", Content: memo}}},
			GoalMessages:        []core.Message{text("user", "Find the price.")},
			Steps:               steps,
			ObservationTemplate: "Observation: {observation}",
		}))
	}
	return out
}

type reportJSON struct {
	Calls []struct {
		Previous *int `json:"previous"`
		Extends  bool `json:"extends"`
		Break    *struct {
			Segment, Cause string
			Message, Char  int
			Step           *int
			Previous       *string `json:"excerpt_previous"`
			This           *string `json:"excerpt_this"`
		} `json:"break"`
		PromptChars int64 `json:"prompt_chars"`
		Cacheable   int64 `json:"cacheable_prefix_chars"`
		Usage       *struct {
			Class  string                                `json:"class"`
			Cached *int64                                `json:"cached_tokens"`
			Error  *struct{ Code, Path, Message string } `json:"error"`
		} `json:"usage"`
		Error *struct{ Code, Path string } `json:"error"`
	} `json:"calls"`
	Groups []struct {
		Calls       int   `json:"calls"`
		PrefixChars int64 `json:"prefix_chars"`
	} `json:"groups"`
	Totals struct {
		Calls, Errors, Breaks int
	} `json:"totals"`
}

func cacheReport(t *testing.T, reqs [][]byte, usage []any) reportJSON {
	t.Helper()
	var err error
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendArrayHeader(msgp.AppendString(b, "requests"), uint32(len(reqs)))
	for _, r := range reqs {
		b = append(b, r...)
	}
	b = msgp.AppendString(b, "usage")
	if usage == nil {
		b = msgp.AppendNil(b)
	} else if b, err = msgp.AppendIntf(b, usage); err != nil {
		t.Fatal(err)
	}
	ans := wirejson.AppendCacheReport(nil, b)
	var r reportJSON
	if err := json.Unmarshal(ans, &r); err != nil || len(r.Calls) != len(reqs) {
		t.Fatalf("not JSON: %v: %.300s", err, ans)
	}
	return r
}

// TestCacheReportPlantedBreaks: the report names exactly the three planted
// calls, with their segment and cause; every other call extends the
// previous one, its whole prompt cacheable.
func TestCacheReportPlantedBreaks(t *testing.T) {
	reqs := plantedRun(200)
	r := cacheReport(t, reqs, nil)
	want := map[int][2]string{50: {"injections", "injections_changed"}, 120: {"run", "run_changed"}, 170: {"history", "history_rewritten"}}
	for i, c := range r.Calls {
		if c.Error != nil {
			t.Fatalf("call %d: %+v", i, c.Error)
		}
		w, planted := want[i]
		switch {
		case i == 0:
			if c.Previous != nil || c.Extends || c.Break != nil || c.Cacheable != 0 {
				t.Errorf("call 0: %+v", c)
			}
		case planted:
			if c.Extends || c.Break == nil || c.Break.Segment != w[0] || c.Break.Cause != w[1] {
				t.Errorf("call %d: extends %v, break %+v; want %v", i, c.Extends, c.Break, w)
			}
		default:
			prev, _, _ := msgp.ReadIntfBytes(core.AssembleBytes(reqs[i-1]))
			var chars int64
			switch n := prev.(map[string]any)["prompt_chars"].(type) {
			case int64:
				chars = n
			case uint64:
				chars = int64(n)
			}
			if !c.Extends || c.Break != nil || c.Cacheable != chars {
				t.Errorf("call %d: extends %v, break %+v, cacheable %d; want the previous prompt's %d", i, c.Extends, c.Break, c.Cacheable, chars)
			}
		}
	}
	if r.Totals.Breaks != 3 || r.Totals.Calls != 200 || len(r.Groups) != 3 {
		t.Errorf("totals %+v, %d groups", r.Totals, len(r.Groups))
	}
	// the excerpts are each call's own text (not a buffer reused since)
	if b := r.Calls[50].Break; *b.Previous != "metric units." || *b.This != "imperial units." {
		t.Errorf("call 50's excerpts: %q, %q", *b.Previous, *b.This)
	}
	// the run break: the system message is message 0, its text differs at
	// its end (a space appended after 24 characters)
	if b := r.Calls[120].Break; b.Message != 0 || b.Char != 24 {
		t.Errorf("call 120 breaks at message %d, char %d", b.Message, b.Char)
	}
	// the history break: the first history message (3) of step 0
	if b := r.Calls[170].Break; b.Message != 3 || b.Step == nil || *b.Step != 0 {
		t.Errorf("call 170 breaks at %+v", b)
	}
}

// TestCacheReportStepsRemovedAndUsage: a history cut short is
// steps_removed; recorded usage classifies each call (both providers'
// shapes, a provider miss with an unchanged prefix, no usage).
func TestCacheReportStepsRemovedAndUsage(t *testing.T) {
	run := plantedRun(6)
	reqs := [][]byte{run[3], run[4], run[2], run[3], run[4], []byte{0x91, 0x01}}
	anthropic := func(read int) any {
		return map[string]any{"input_tokens": int64(50), "cache_read_input_tokens": int64(read), "cache_creation_input_tokens": int64(10)}
	}
	openai := func(read int) any {
		return map[string]any{"usage": map[string]any{"prompt_tokens": int64(900), "prompt_tokens_details": map[string]any{"cached_tokens": int64(read)}}}
	}
	r := cacheReport(t, reqs, []any{anthropic(0), openai(640), anthropic(0), nil, openai(0), nil})
	deepseek := cacheReport(t, run[3:5], []any{nil, map[string]any{"usage": map[string]any{"prompt_cache_hit_tokens": int64(96), "prompt_cache_miss_tokens": int64(20)}}})
	if u := deepseek.Calls[1].Usage; u == nil || u.Class != "hit" || u.Cached == nil || *u.Cached != 96 {
		t.Errorf("DeepSeek's usage: %+v", u)
	}
	if b := r.Calls[2].Break; b == nil || b.Cause != "steps_removed" || b.Segment != "history" {
		t.Errorf("call 2: %+v", b)
	}
	classes := []string{"first", "hit", "prefix_break", "no_usage", "provider_miss"}
	for i, want := range classes {
		if u := r.Calls[i].Usage; u == nil || u.Class != want {
			t.Errorf("call %d: usage %+v, want %s", i, u, want)
		}
	}
	if e := r.Calls[5].Error; e == nil || e.Code != "malformed_request" {
		t.Errorf("call 5 (a message list): %+v", r.Calls[5])
	}
	if r.Totals.Errors != 1 {
		t.Errorf("totals %+v", r.Totals)
	}
}

// TestCacheReportBadUsage: a recorded count that is not a count of tokens
// is that call's invalid_usage with a coded error at its path within the
// call's usage, never read
// as nothing cached, and the other calls are reported; a null details
// object (as OpenAI may send) records nothing.
func TestCacheReportBadUsage(t *testing.T) {
	run := plantedRun(3)
	for _, tc := range []struct {
		usage any
		path  string
	}{
		{map[string]any{"prompt_tokens_details": map[string]any{"cached_tokens": "12"}}, "usage.prompt_tokens_details.cached_tokens"},
		{map[string]any{"usage": map[string]any{"cache_read_input_tokens": int64(-1)}}, "usage.usage.cache_read_input_tokens"},
		{map[string]any{"prompt_cache_hit_tokens": 3.5}, "usage.prompt_cache_hit_tokens"},
		{"12", "usage"},
	} {
		r := cacheReport(t, run[:3], []any{nil, tc.usage, map[string]any{"cache_read_input_tokens": int64(7)}})
		u := r.Calls[1].Usage
		if u == nil || u.Class != "invalid_usage" || u.Cached != nil || u.Error == nil || u.Error.Code != "malformed_request" || u.Error.Path != tc.path {
			t.Errorf("usage %v: %+v, want invalid_usage, malformed_request at %s", tc.usage, u, tc.path)
		}
		if u := r.Calls[2].Usage; u == nil || u.Class != "hit" {
			t.Errorf("usage %v: the next call's usage %+v, want hit", tc.usage, u)
		}
	}
	u := cacheReport(t, run[:2], []any{nil, map[string]any{"prompt_tokens_details": nil, "prompt_tokens": int64(10)}}).Calls[1].Usage
	if u == nil || u.Class == "invalid_usage" {
		t.Errorf("a null details object: %+v", u)
	}
}

// TestCacheReportOneRequestIsNoList: one request (a map) where the run's
// list belongs is refused at requests, never read as a list of its keys; in
// a Python user's words too.
func TestCacheReportOneRequestIsNoList(t *testing.T) {
	one := plantedRun(1)[0]
	req := append(msgp.AppendString(msgp.AppendMapHeader(nil, 1), "requests"), one...)
	want := `{"error":{"code":"malformed_request","message":"expected a list of requests (an array), found one request (a map): give the run's requests in a list, in call order","path":"requests"}}`
	if got := wirejson.AppendCacheReport(nil, req); string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	core.SetWords("python")
	defer core.SetWords("wire")
	want = `{"error":{"code":"malformed_request","message":"expected a list of requests (a list), found one request (a dict): give the run's requests in a list, in call order","path":"requests"}}`
	if got := wirejson.AppendCacheReport(nil, req); string(got) != want {
		t.Errorf("Python's words: got  %s\nwant %s", got, want)
	}
}

// TestCacheReportUnreadableUsageIsTheCalls: a usage that cannot be read (a
// count past 2^53 − 1 or past 64 bits, a key that is not a str, a value
// nested past 64 levels) is that call's invalid_usage at its path, never
// the report's error; the next call is read on. A count up to 2^53 − 1
// comes back exactly.
func TestCacheReportUnreadableUsageIsTheCalls(t *testing.T) {
	run := plantedRun(3)
	intKey := msgp.AppendInt(msgp.AppendInt(msgp.AppendInt64(msgp.AppendString(msgp.AppendMapHeader(nil, 2), "cache_read_input_tokens"), 5), 1), 2)
	bigInt := []byte{0xc7, 20, 3} // ext 3: an int beyond 64 bits, its 20 bytes of decimal text
	bigInt = append(bigInt, "18446744073709551616"...)
	deep := func(n int) msgp.Raw {
		b := msgp.AppendMapHeader(nil, 1)
		b = msgp.AppendString(b, "x")
		for range n {
			b = msgp.AppendArrayHeader(b, 1)
		}
		return msgp.AppendString(b, "leaf")
	}
	over := "a count of tokens over 2^53 − 1 (9007199254740991), more than any provider records and more than every host holds exactly; give the provider's recorded usage as it is"
	for _, tc := range []struct {
		name          string
		usage         any
		path, message string
	}{
		{"uint64 max", map[string]any{"cache_read_input_tokens": uint64(1<<64 - 1)}, "usage.cache_read_input_tokens", over},
		{"2^62 + 1", map[string]any{"prompt_cache_hit_tokens": uint64(1<<62 + 1)}, "usage.prompt_cache_hit_tokens", over},
		{"2^53", map[string]any{"usage": map[string]any{"input_tokens_details": map[string]any{"cached_tokens": int64(1 << 53)}}},
			"usage.usage.input_tokens_details.cached_tokens", over},
		{"beyond 64 bits", map[string]any{"cache_read_input_tokens": msgp.Raw(bigInt)}, "usage.cache_read_input_tokens", over},
		{"an int key", msgp.Raw(intKey), "usage", ""},
		{"65 deep", deep(65), "usage.x" + strings.Repeat("[0]", 65), "this value nests deeper than 64 levels"},
		{"8,000 deep", deep(8000), "usage.x" + strings.Repeat("[0]", 65), "this value nests deeper than 64 levels"},
	} {
		r := cacheReport(t, run[:3], []any{nil, tc.usage, map[string]any{"cache_read_input_tokens": int64(7)}})
		u := r.Calls[1].Usage
		if u == nil || u.Class != "invalid_usage" || u.Cached != nil || u.Error == nil || u.Error.Code != "malformed_request" ||
			u.Error.Path != tc.path || tc.message != "" && u.Error.Message != tc.message {
			t.Errorf("%s: %+v %+v; want invalid_usage, malformed_request at %s: %q", tc.name, u, u.Error, tc.path, tc.message)
		}
		if u := r.Calls[2].Usage; u == nil || u.Class != "hit" {
			t.Errorf("%s: the next call's usage %+v, want hit", tc.name, u)
		}
	}
	for _, n := range []int64{1<<53 - 1, 1<<53 - 2, 1 << 40} {
		u := cacheReport(t, run[:2], []any{nil, map[string]any{"cache_read_input_tokens": uint64(n)}}).Calls[1].Usage
		if u == nil || u.Class != "hit" || u.Cached == nil || *u.Cached != n {
			t.Errorf("%d: %+v; want hit with exactly %d", n, u, n)
		}
	}
	if u := cacheReport(t, run[:2], []any{nil, deep(64)}).Calls[1].Usage; u == nil || u.Class != "unknown_usage" {
		t.Errorf("a usage 64 deep: %+v; want unknown_usage (it has no field of a known shape)", u)
	}
}

// TestCacheReportUsageShapes: each provider's usage shape, bare and in its
// whole response, gives the tokens read and written its API reference
// names (literals here, by hand); a usage of no known shape is
// unknown_usage, never a miss; and the provider's own miss reason is kept,
// flagged where it names a change the prompts do not hold.
func TestCacheReportUsageShapes(t *testing.T) {
	run := plantedRun(3)
	type want struct {
		class           string
		cached, written any // float64 as JSON decodes, or nil
	}
	m := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	i := func(n int) int64 { return int64(n) }
	for _, tc := range []struct {
		name  string
		usage map[string]any
		whole string // the key a whole response holds it under
		want  want
	}{
		{"anthropic hit", m("input_tokens", i(9), "cache_read_input_tokens", i(1910), "cache_creation_input_tokens", i(0)), "usage", want{"hit", 1910.0, 0.0}},
		{"anthropic write only", m("cache_read_input_tokens", i(0), "cache_creation_input_tokens", i(1910)), "usage", want{"write_only", 0.0, 1910.0}},
		{"anthropic 5m/1h split", m("cache_read_input_tokens", i(0), "cache_creation", m("ephemeral_5m_input_tokens", i(100), "ephemeral_1h_input_tokens", i(20))), "usage", want{"write_only", 0.0, 120.0}},
		{"anthropic neither", m("cache_read_input_tokens", i(0), "cache_creation_input_tokens", i(0)), "usage", want{"provider_miss", 0.0, 0.0}},
		{"openai chat write", m("prompt_tokens", i(900), "prompt_tokens_details", m("cached_tokens", i(0), "cache_write_tokens", i(896))), "usage", want{"write_only", 0.0, 896.0}},
		{"openai chat hit", m("prompt_tokens_details", m("cached_tokens", i(640))), "usage", want{"hit", 640.0, nil}},
		{"openai responses write", m("input_tokens_details", m("cached_tokens", i(0), "cache_write_tokens", i(12))), "usage", want{"write_only", 0.0, 12.0}},
		{"deepseek miss", m("prompt_cache_hit_tokens", i(0), "prompt_cache_miss_tokens", i(900)), "usage", want{"provider_miss", 0.0, nil}},
		{"bedrock hit", m("inputTokens", i(40), "cacheReadInputTokens", i(1024), "cacheWriteInputTokens", i(0)), "usage", want{"hit", 1024.0, 0.0}},
		{"bedrock write only", m("inputTokens", i(40), "cacheReadInputTokens", i(0), "cacheWriteInputTokens", i(1024)), "usage", want{"write_only", 0.0, 1024.0}},
		{"gemini hit", m("promptTokenCount", i(1200), "cachedContentTokenCount", i(1100)), "usageMetadata", want{"hit", 1100.0, nil}},
		{"gemini zero left out", m("promptTokenCount", i(1200), "totalTokenCount", i(1250)), "usageMetadata", want{"provider_miss", 0.0, nil}},
		{"unknown", m("prompt_tokens", i(900), "total_tokens", i(950)), "usage", want{"unknown_usage", nil, nil}},
		{"empty", m(), "usage", want{"unknown_usage", nil, nil}},
	} {
		for _, u := range []any{tc.usage, m(tc.whole, tc.usage, "id", "resp_1")} {
			b := msgp.AppendMapHeader(nil, 2)
			b = msgp.AppendArrayHeader(msgp.AppendString(b, "requests"), 2)
			b = append(append(b, run[1]...), run[2]...)
			b, _ = msgp.AppendIntf(msgp.AppendString(b, "usage"), []any{nil, u})
			var r struct {
				Calls []struct {
					Usage map[string]any `json:"usage"`
				} `json:"calls"`
			}
			if err := json.Unmarshal(wirejson.AppendCacheReport(nil, b), &r); err != nil || len(r.Calls) != 2 {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got := r.Calls[1].Usage
			if got["class"] != tc.want.class || got["cached_tokens"] != tc.want.cached || got["written_tokens"] != tc.want.written {
				t.Errorf("%s (%v): %v, want %+v", tc.name, u, got, tc.want)
			}
			if _, noted := got["note"]; noted != (tc.want.class == "unknown_usage") {
				t.Errorf("%s: note %v", tc.name, got["note"])
			}
		}
	}
	// The provider's reason: beside a kept prefix (call 1 extends call 0)
	// and beside our break (call 2 has fewer steps: steps_removed).
	reason := func(typ string) any {
		return m("usage", m("cache_read_input_tokens", i(0), "cache_creation_input_tokens", i(50)),
			"diagnostics", m("cache_miss_reason", m("type", typ, "cache_missed_input_tokens", i(1800))))
	}
	for _, tc := range []struct {
		typ                  string
		kept, broken         bool // disagrees: beside a kept prefix, beside a break
		keptClass, brokeClas string
	}{
		{"tools_changed", true, true, "write_only", "prefix_break"},
		{"model_changed", true, true, "write_only", "prefix_break"},
		{"system_changed", true, false, "write_only", "prefix_break"},
		{"messages_changed", true, false, "write_only", "prefix_break"},
		{"previous_message_not_found", false, false, "write_only", "prefix_break"},
	} {
		b := msgp.AppendMapHeader(nil, 2)
		b = msgp.AppendArrayHeader(msgp.AppendString(b, "requests"), 3)
		b = append(append(append(b, run[1]...), run[2]...), run[1]...)
		b, _ = msgp.AppendIntf(msgp.AppendString(b, "usage"), []any{nil, reason(tc.typ), reason(tc.typ)})
		var r struct {
			Calls []struct {
				Usage map[string]any `json:"usage"`
			} `json:"calls"`
		}
		if err := json.Unmarshal(wirejson.AppendCacheReport(nil, b), &r); err != nil {
			t.Fatal(err)
		}
		for k, w := range []struct {
			dis   bool
			class string
		}{{tc.kept, tc.keptClass}, {tc.broken, tc.brokeClas}} {
			got := r.Calls[k+1].Usage
			if got["miss_reason"] != tc.typ || got["miss_reason_disagrees"] != w.dis || got["class"] != w.class {
				t.Errorf("%s, call %d: %v, want disagrees %v, class %s", tc.typ, k+1, got, w.dis, w.class)
			}
		}
	}
}
