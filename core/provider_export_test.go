package core_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wirejson"
)

// exportOf answers an export request packed here with the msgp library.
func exportOf(t *testing.T, req []byte, provider string, options map[string]any) []byte {
	t.Helper()
	b := msgp.AppendMapHeader(nil, 3)
	b = msgp.AppendBytes(msgp.AppendString(b, "request"), req) // judged on its own, as a host's bytes
	b = msgp.AppendString(msgp.AppendString(b, "provider"), provider)
	b, err := msgp.AppendIntf(msgp.AppendString(b, "options"), options)
	if err != nil {
		t.Fatal(err)
	}
	return exportJSON(t, wirejson.AppendExport(nil, b))
}

// exportJSON is an export answer (a msgpack map) as JSON text, as the
// command-line tool prints it.
func exportJSON(t *testing.T, answer []byte) []byte {
	t.Helper()
	js, rest, err := wirejson.FromMsgpack(nil, answer)
	if err != nil || len(rest) != 0 {
		t.Fatalf("the export answered %d bytes JSON cannot hold: %v", len(answer), err)
	}
	return js
}

type exportBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type exportMessage struct {
	Role    string        `json:"role"`
	Content []exportBlock `json:"content"`
}

type exportBody struct {
	System   []exportBlock   `json:"system"`
	Messages []exportMessage `json:"messages"`
	Input    []exportMessage `json:"input"`
	Key      *string         `json:"prompt_cache_key"`
	Error    *struct{ Code, Path, Message string }
}

// TestExportKeepsEveryText: for every vector request and each provider,
// the exported messages are the response's, role for role and text for
// text (the leading system messages as Anthropic's system), nothing
// added; at most four breakpoints, on Anthropic and OpenRouter only (its
// system messages stay messages); OpenAI's cache key
// is the run digest. The response is read with the msgp library.
func TestExportKeepsEveryText(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	exported := 0
	for _, c := range cases {
		resp, _, err := msgp.ReadIntfBytes(core.AssembleBytes(c.Request))
		if err != nil {
			t.Fatal(err)
		}
		r := resp.(map[string]any)
		for _, provider := range []string{"anthropic", "openai-chat", "openai-responses", "openrouter"} {
			var body exportBody
			ans := exportOf(t, c.Request, provider, nil)
			if err := json.Unmarshal(ans, &body); err != nil {
				t.Fatalf("%s %s: not JSON: %v", c.Name, provider, err)
			}
			if r["ok"] != true {
				if body.Error == nil || !strings.HasPrefix(body.Error.Path, "request") {
					t.Fatalf("%s %s: an error request exported: %.200s", c.Name, provider, ans)
				}
				continue
			}
			if body.Error != nil {
				if provider == "anthropic" && body.Error.Code == "malformed_request" && strings.Contains(body.Error.Message, "system") {
					continue // a system message after another role
				}
				if body.Error.Code == "malformed_request" && strings.HasPrefix(body.Error.Path, "request") &&
					(strings.HasPrefix(body.Error.Message, "Anthropic ") || strings.HasPrefix(body.Error.Message, "OpenAI's ")) {
					continue // a provider rule (TestExportProviderRules)
				}
				t.Fatalf("%s %s: %+v", c.Name, provider, body.Error)
			}
			exported++
			var got []exportMessage
			if len(body.System) > 0 {
				got = append(got, exportMessage{Role: "system", Content: body.System})
			}
			got = append(append(got, body.Messages...), body.Input...)
			var want []exportMessage
			for _, m := range r["messages"].([]any) {
				mm := m.(map[string]any)
				em := exportMessage{Role: mm["role"].(string)}
				for _, blk := range mm["content"].([]any) {
					s := blk.(map[string]any)["text"].(string)
					em.Content = append(em.Content, exportBlock{Text: &s})
				}
				want = append(want, em)
			}
			// Anthropic's system holds the blocks of every leading system
			// message: join them as one for the comparison.
			sys := 0
			for sys < len(want) && want[sys].Role == "system" && provider == "anthropic" {
				sys++
			}
			if sys > 1 {
				var all []exportBlock
				for _, m := range want[:sys] {
					all = append(all, m.Content...)
				}
				want = append([]exportMessage{{Role: "system", Content: all}}, want[sys:]...)
			}
			if sys == 1 && len(want[0].Content) == 0 { // a system message with no block leaves no system
				want = want[1:]
			}
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d messages, the response has %d", c.Name, provider, len(got), len(want))
			}
			breaks, marks := 0, provider == "anthropic" || provider == "openrouter" // cache_control, no cache key
			for i := range want {
				if got[i].Role != want[i].Role || len(got[i].Content) != len(want[i].Content) {
					t.Fatalf("%s %s: message %d is %s with %d blocks, want %s with %d", c.Name, provider, i, got[i].Role, len(got[i].Content), want[i].Role, len(want[i].Content))
				}
				for k, blk := range got[i].Content {
					if blk.Text == nil || *blk.Text != *want[i].Content[k].Text {
						t.Fatalf("%s %s: message %d block %d text differs", c.Name, provider, i, k)
					}
					if blk.CacheControl != nil {
						breaks++
					}
				}
			}
			if breaks > 4 || !marks && breaks > 0 {
				t.Fatalf("%s %s: %d breakpoints", c.Name, provider, breaks)
			}
			digest := r["prefix_digests"].(map[string]any)["run"].(string)
			if marks != (body.Key == nil) || body.Key != nil && *body.Key != digest {
				t.Fatalf("%s %s: prompt_cache_key %v", c.Name, provider, body.Key)
			}
		}
	}
	if exported < 100 {
		t.Fatalf("only %d exports compared", exported)
	}
}

// TestExportBreakpoints: the default policy marks the last block of the
// run, the injections, the goal and the prompt; with an empty injection
// slot and a long history the fourth goes lookback blocks below the last.
func TestExportBreakpoints(t *testing.T) {
	text := func(role, s string) core.Message {
		return core.Message{Role: role, Content: []core.Block{{Type: "text", Text: s}}}
	}
	req := func(inj bool, steps int) []byte {
		r := &core.Request{
			RunMessages:         []core.Message{text("system", "sys a"), text("system", "sys b"), text("user", "example")},
			GoalMessages:        []core.Message{text("user", "goal")},
			ObservationTemplate: "{observation}",
		}
		if inj {
			r.Injections = map[string][]core.Injection{"m": {{EntryID: "1", Content: "memo"}}}
		}
		for s := range steps {
			r.Steps = append(r.Steps, core.Step{RawOutput: "r" + string(rune('a'+s%26)), Observation: "o"})
		}
		return core.EncodeRequest(r)
	}
	marked := func(ans []byte) (sys, msgs []int) {
		var body exportBody
		if err := json.Unmarshal(ans, &body); err != nil || body.Error != nil {
			t.Fatalf("%v %.300s", err, ans)
		}
		for i, b := range body.System {
			if b.CacheControl != nil {
				sys = append(sys, i)
				if string(b.CacheControl) != `{"type":"ephemeral","ttl":"1h"}` && string(b.CacheControl) != `{"type":"ephemeral"}` {
					t.Errorf("cache_control %s", b.CacheControl)
				}
			}
		}
		for i, m := range body.Messages {
			for _, b := range m.Content {
				if b.CacheControl != nil {
					msgs = append(msgs, i)
				}
			}
		}
		return sys, msgs
	}
	// run: sys a, sys b (system), example (message 0); injection memo
	// (1); goal (2); 3 steps: messages 3..8
	sys, msgs := marked(exportOf(t, req(true, 3), "anthropic", nil))
	if len(sys) != 0 || !equalInts(msgs, []int{0, 1, 2, 8}) {
		t.Errorf("with injections: system %v, messages %v", sys, msgs)
	}
	// no injection, 30 steps (60 messages after the goal at 1): the last
	// block is message 61, the spare breakpoint 20 blocks below it (blocks
	// count the two system blocks: message m is block m+2)
	sys, msgs = marked(exportOf(t, req(false, 30), "anthropic", map[string]any{"ttl": "1h"}))
	if !equalInts(msgs, []int{0, 1, 41, 61}) {
		t.Errorf("long history: system %v, messages %v", sys, msgs)
	}
	_, msgs = marked(exportOf(t, req(false, 30), "anthropic", map[string]any{"max_breakpoints": 2, "lookback": 0}))
	if !equalInts(msgs, []int{0, 61}) {
		t.Errorf("two breakpoints: %v", msgs)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestExportErrors: a system message after another role (Anthropic), the
// provider's own fields in the body, an unknown provider and bad options
// are coded errors with their path; the body's other fields pass through.
func TestExportErrors(t *testing.T) {
	req := core.EncodeRequest(&core.Request{
		RunMessages:         []core.Message{{Role: "user", Content: []core.Block{{Type: "text", Text: "hi"}}}},
		GoalMessages:        []core.Message{{Role: "system", Content: []core.Block{{Type: "text", Text: "late"}}}},
		ObservationTemplate: "{observation}",
	})
	for _, tc := range []struct {
		provider string
		options  map[string]any
		path     string
	}{
		{"anthropic", nil, "request.goal_messages[0]"},
		{"openai-chat", map[string]any{"body": map[string]any{"messages": []any{}}}, "options.body.messages"},
		{"mistral", nil, "provider"},
		{"anthropic", map[string]any{"ttl": "2h"}, "options.ttl"},
		{"anthropic", map[string]any{"max_breakpoints": 5}, "options.max_breakpoints"},
		{"anthropic", map[string]any{"colour": "red"}, "options.colour"},
		{"openai-chat", map[string]any{"body": map[string]any{"error": 1}}, "options.body.error"},
		{"openai-responses", map[string]any{"body": map[string]any{"blob": []byte{1}}}, "options.body.blob"},
	} {
		var body exportBody
		_ = json.Unmarshal(exportOf(t, req, tc.provider, tc.options), &body)
		if body.Error == nil || body.Error.Path != tc.path || body.Error.Code != "malformed_request" && body.Error.Code != "unknown_field" {
			t.Errorf("%s %v: %+v, want malformed_request at %s", tc.provider, tc.options, body.Error, tc.path)
		}
	}
	// A body of more fields than a fixmap holds: every one kept.
	many := map[string]any{}
	for i := range 20 {
		many[fmt.Sprintf("f%02d", i)] = i
	}
	var got map[string]any
	if err := json.Unmarshal(exportOf(t, req, "openai-chat", map[string]any{"body": many}), &got); err != nil || len(got) != 22 || got["f19"] != 19.0 {
		t.Errorf("a body of 20 fields: %v, %v", got, err)
	}
	// The body's keys in their order (a Go map has none: packed by hand).
	body := msgp.AppendMapHeader(msgp.AppendString(msgp.AppendMapHeader(nil, 1), "body"), 3)
	body = msgp.AppendString(msgp.AppendString(body, "model"), "gpt-x")
	body = msgp.AppendFloat64(msgp.AppendString(body, "temperature"), 0.5)
	body = msgp.AppendArrayHeader(msgp.AppendString(body, "tools"), 1)
	body = msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(body, 1), "type"), "function")
	b := msgp.AppendMapHeader(nil, 3)
	b = msgp.AppendBytes(msgp.AppendString(b, "request"), req)
	b = msgp.AppendString(msgp.AppendString(b, "provider"), "openai-chat")
	ans := exportJSON(t, wirejson.AppendExport(nil, append(msgp.AppendString(b, "options"), body...)))
	if !strings.HasPrefix(string(ans), `{"model":"gpt-x","temperature":0.5,"tools":[{"type":"function"}],"messages":[`) {
		t.Errorf("body: %.200s", ans)
	}
}

// exportVector is a case of testdata/export-vectors/export.json, written by
// the independent Python reference testdata/gen/gen_export_vectors.py.
type exportVector struct {
	Name     string `json:"name"`
	Request  []byte `json:"request"`
	Provider string `json:"provider"`
	Options  []byte `json:"options"`
	Answer   string `json:"answer"`
	Error    *struct{ Code, Path, Message string }
}

// LoadExportVectors reads the export vectors.
func loadExportVectors(t *testing.T) []exportVector {
	t.Helper()
	var all []exportVector
	for _, f := range []string{"export.json", "export-long.json"} {
		data, err := os.ReadFile("../testdata/export-vectors/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Cases []exportVector }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		all = append(all, doc.Cases...)
	}
	if len(all) < 600 {
		t.Fatalf("%d export vectors", len(all))
	}
	return all
}

// TestExportVectors: the core answers every export vector as the
// reference does: an ok body byte for byte, an error by code and path, and
// by its message where the vector gives one (a provider rule's refusal).
// Each is asked twice in a row: the second OpenAI body reads its run
// digest from the digest cache the first filled (runDigest's short way).
func TestExportVectors(t *testing.T) {
	for _, c := range loadExportVectors(t) {
		b := msgp.AppendMapHeader(nil, 3)
		b = append(msgp.AppendString(b, "request"), c.Request...)
		b = msgp.AppendString(msgp.AppendString(b, "provider"), c.Provider)
		b = append(msgp.AppendString(b, "options"), c.Options...)
		first := exportJSON(t, wirejson.AppendExport(nil, b))
		got := exportJSON(t, wirejson.AppendExport(nil, b))
		if string(first) != string(got) {
			t.Errorf("%s: asked twice, answered\n%.400s\nthen\n%.400s", c.Name, first, got)
		}
		if c.Error != nil {
			var e exportBody
			if json.Unmarshal(got, &e) != nil || e.Error == nil || e.Error.Code != c.Error.Code || e.Error.Path != c.Error.Path ||
				c.Error.Message != "" && e.Error.Message != c.Error.Message {
				t.Errorf("%s: %.300s, want the error %+v", c.Name, got, *c.Error)
			}
			continue
		}
		if string(got) != c.Answer {
			t.Errorf("%s:\n got %.400s\nwant %.400s", c.Name, got, c.Answer)
		}
	}
}

// TestJoinedShapesEncoded: the joined shapes' strings, msgpack written out
// by hand, are the encodings of their keys and values.
func TestJoinedShapesEncoded(t *testing.T) {
	enc := func(v ...any) string {
		var b []byte
		for _, x := range v {
			switch x := x.(type) {
			case int: // a map of x keys
				b = msgp.AppendMapHeader(b, uint32(x))
			case string:
				b = msgp.AppendString(b, x)
			}
		}
		return string(b)
	}
	s := core.BedrockShapeStrings()
	want := []string{enc("system"), enc("messages"), enc(2, "role", "user", "content"), enc(2, "role", "assistant", "content"),
		enc(1, "text"), enc(1, "cachePoint", 1, "type", "default"), enc(1, "cachePoint", 2, "type", "default", "ttl", "5m"),
		enc(1, "cachePoint", 2, "type", "default", "ttl", "1h")}
	for i := range want {
		if s[i] != want[i] {
			t.Errorf("string %d: %q, want %q", i, s[i], want[i])
		}
	}
}

// TestExportBodyOwnKeys: the option body may not hold a key the provider's
// body writes itself (and "error"), and may hold any other, such as one
// another provider writes. The lists are the providers' documented bodies
// (docs/SPEC.md §7.13), written out here.
func TestExportBodyOwnKeys(t *testing.T) {
	req := core.EncodeRequest(&core.Request{
		RunMessages:         []core.Message{{Role: "user", Content: []core.Block{{Type: "text", Text: "hi"}}}},
		GoalMessages:        []core.Message{{Role: "user", Content: []core.Block{{Type: "text", Text: "go"}}}},
		ObservationTemplate: "{observation}",
	})
	for _, tc := range []struct {
		provider  string
		options   map[string]any
		own, free []string
	}{
		{"anthropic", nil, []string{"messages", "system", "error"}, []string{"input", "contents", "prompt_cache_key"}},
		{"openai-chat", nil, []string{"messages", "input", "prompt_cache_key", "error"}, []string{"system", "prompt_cache_options"}},
		{"openai-chat", map[string]any{"explicit_breakpoints": true}, []string{"prompt_cache_options"}, []string{"system"}},
		{"openai-responses", nil, []string{"messages", "input", "prompt_cache_key", "error"}, []string{"contents"}},
		{"openrouter", nil, []string{"messages", "error"}, []string{"system", "input", "prompt_cache_key"}},
		{"bedrock-converse", nil, []string{"messages", "system", "error"}, []string{"contents", "cachedContent"}},
		{"gemini", nil, []string{"contents", "systemInstruction", "error"}, []string{"messages", "cachedContent"}},
		{"gemini", map[string]any{"cached_content": "cachedContents/x"}, []string{"cachedContent"}, []string{"messages"}},
		{"gemini-cache", nil, []string{"contents", "systemInstruction", "error"}, []string{"system", "cachedContent"}},
	} {
		for _, key := range append(tc.own, tc.free...) {
			options := map[string]any{"body": map[string]any{key: 1}}
			for k, v := range tc.options {
				options[k] = v
			}
			var body exportBody
			ans := exportOf(t, req, tc.provider, options)
			_ = json.Unmarshal(ans, &body)
			refused := body.Error != nil && body.Error.Code == "malformed_request" && body.Error.Path == "options.body."+key
			if want := slices.Contains(tc.own, key); refused != want {
				t.Errorf("%s %v, body key %q: refused %v, want %v: %.200s", tc.provider, tc.options, key, refused, want, ans)
			}
		}
	}
}
