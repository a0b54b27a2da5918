package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// The generated types are checked against the core itself, not against
// the generator's own table: every key the core writes in a response, a
// comparison or an error is a field of the generated type and every field
// is a key it writes, each value of the field's type; in a request a key
// the core requires is a required field and a key it does without an
// optional one.

// coreDir is core's source directory.
func coreDir(t *testing.T) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "core")
}

func testShapes(t *testing.T) map[string]shape {
	t.Helper()
	list, err := buildShapes(coreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]shape{}
	for _, s := range list {
		if s.py != "" {
			byName[s.py] = s
		}
	}
	return byName
}

// fullRequest has every key of a request, each once at least.
func fullRequest() *core.Request {
	budget := int64(1 << 20)
	text := func(s string) []core.Message {
		return []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: core.BlockTypeText, Text: s}}}}
	}
	return &core.Request{
		RunMessages:  []core.Message{{Role: core.RoleSystem, Content: []core.Block{{Type: core.BlockTypeText, Text: "sys"}}}},
		Injections:   map[string][]core.Injection{"notes": {{EntryID: "n1", Content: "note"}}},
		GoalMessages: text("goal"), Steps: []core.Step{{RawOutput: "act", Observation: "seen"}},
		ObservationTemplate: "Observation: {observation}", MaxPromptChars: &budget,
	}
}

// toValue is msgpack as JSON values, numbers as json.Number.
func toValue(t *testing.T, b []byte) any {
	t.Helper()
	var js bytes.Buffer
	if _, err := msgp.UnmarshalAsJSON(&js, b); err != nil {
		t.Fatal(err)
	}
	return jsonValue(t, js.Bytes())
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// toMsgpack is a JSON value as msgpack (integers as integers).
func toMsgpack(t *testing.T, b []byte, v any) []byte {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		b = msgp.AppendMapHeader(b, uint32(len(v)))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			b = toMsgpack(t, msgp.AppendString(b, k), v[k])
		}
	case []any:
		b = msgp.AppendArrayHeader(b, uint32(len(v)))
		for _, x := range v {
			b = toMsgpack(t, b, x)
		}
	case string:
		b = msgp.AppendString(b, v)
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			t.Fatal(err)
		}
		b = msgp.AppendInt64(b, n)
	case bool:
		b = msgp.AppendBool(b, v)
	case nil:
		b = msgp.AppendNil(b)
	default:
		t.Fatalf("no msgpack for %T", v)
	}
	return b
}

// place is an object in a value and the generated type it is.
type place struct {
	path []any // keys and indexes from the top
	typ  shape
}

// walk checks value v against the type t at path and collects the objects
// (places) in it: an object has exactly the type's keys (its optional ones
// may be absent), each value of its field's type.
func walk(t *testing.T, shapes map[string]shape, v any, typ *texpr, path []any, out *[]place) {
	t.Helper()
	at := fmt.Sprint(path)
	if typ == nil {
		t.Fatalf("%s: no type", at)
	}
	bad := func() { t.Errorf("%s: %#v is not of the generated type %s", at, v, pyType(typ, nil)) }
	switch typ.kind {
	case "null":
		if v != nil {
			walk(t, shapes, v, typ.elem, path, out)
		}
		return
	case "str", "lit":
		s, ok := v.(string)
		if !ok || typ.kind == "lit" && !slices.Contains(typ.lits, s) {
			bad()
		}
		if typ.py == "ErrorCode" && !slices.Contains(core.Codes(), core.Code(s)) {
			bad()
		}
	case "int", "float":
		n, ok := v.(json.Number)
		if _, err := n.Int64(); !ok || typ.kind == "int" && err != nil {
			bad()
		}
	case "any":
	case "union": // the member whose keys the object has
		m, _ := v.(map[string]any)
		for _, e := range typ.elems {
			if s := shapes[e.name]; e.kind == "named" && hasKeysOf(m, s) {
				walk(t, shapes, v, e, path, out)
				return
			}
		}
		bad()
	case "bool":
		if _, ok := v.(bool); !ok {
			bad()
		}
	case "list":
		xs, ok := v.([]any)
		if !ok || len(xs) == 0 {
			t.Errorf("%s: %#v is not a non-empty list (the example must show its elements)", at, v)
		}
		for i, x := range xs {
			walk(t, shapes, x, typ.elem, append(slices.Clip(path), i), out)
		}
	case "dict":
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			t.Errorf("%s: %#v is not a non-empty map", at, v)
		}
		for k, x := range m {
			walk(t, shapes, x, typ.elem, append(slices.Clip(path), k), out)
		}
	case "named":
		s := shapes[typ.name]
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		*out = append(*out, place{slices.Clone(path), s})
		seen := map[string]bool{}
		for _, f := range s.fields {
			seen[f.wire] = true
			x, ok := m[f.wire]
			if !ok {
				if !f.optional {
					t.Errorf("%s: the core wrote no %q, a required key of %s", at, f.wire, s.py)
				}
				continue
			}
			walk(t, shapes, x, f.typ, append(slices.Clip(path), f.wire), out)
		}
		for k := range m {
			if !seen[k] {
				t.Errorf("%s: the core wrote %q, which %s does not have", at, k, s.py)
			}
		}
	default:
		t.Fatalf("%s: type kind %q", at, typ.kind)
	}
}

// hasKeysOf reports whether m's keys are fields of s, its required ones
// among them.
func hasKeysOf(m map[string]any, s shape) bool {
	if m == nil {
		return false
	}
	fields := map[string]bool{}
	for _, f := range s.fields {
		fields[f.wire] = true
		x, ok := m[f.wire]
		if !ok && !f.optional {
			return false
		}
		if s, isStr := x.(string); ok && isStr && f.typ.kind == "lit" && !slices.Contains(f.typ.lits, s) {
			return false // a discriminating literal, like a role
		}
	}
	for k := range m {
		if !fields[k] {
			return false
		}
	}
	return true
}

// TestTypesAreTheCoreResponses: the keys and values the core writes.
func TestTypesAreTheCoreResponses(t *testing.T) {
	shapes := testShapes(t)
	var places []place
	resp := core.AssembleBytes(core.EncodeRequest(fullRequest()))
	walk(t, shapes, toValue(t, resp), named("AssembleResponse"), nil, &places)

	bad := fullRequest()
	bad.ObservationTemplate = "{nope}"
	walk(t, shapes, toValue(t, core.AssembleBytes(core.EncodeRequest(bad))), named("ErrorResponse"), nil, &places)
	bad = fullRequest()
	bad.RunMessages[0].Role = "robot"
	walk(t, shapes, toValue(t, core.AssembleBytes(core.EncodeRequest(bad))), named("ErrorResponse"), nil, &places)

	other := fullRequest()
	other.Steps[0].Observation = "seen otherwise"
	a, b := core.EncodeRequest(fullRequest()), core.EncodeRequest(other)
	for _, pair := range [][2][]byte{{a, b}, {a, a}} {
		c, err := core.Compare(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		walk(t, shapes, jsonValue(t, c.AppendJSON(nil)), named("Comparison"), nil, &places)
	}
	recorded := []byte(`[{"role":"system","content":"sys"}]`)
	c, err := core.Compare(msgpackOf(t, recorded), msgpackOf(t, []byte(`[]`)))
	if err != nil {
		t.Fatal(err)
	}
	walk(t, shapes, jsonValue(t, c.AppendJSON(nil)), named("Comparison"), nil, &places)
}

func msgpackOf(t *testing.T, js []byte) []byte { return toMsgpack(t, nil, jsonValue(t, js)) }

// TestTypesRequireWhatTheCoreRequires: each key of a full request taken
// away in turn, the core answers missing_field exactly where the generated
// type has the key required.
func TestTypesRequireWhatTheCoreRequires(t *testing.T) {
	shapes := testShapes(t)
	full := toValue(t, core.EncodeRequest(fullRequest()))
	var places []place
	walk(t, shapes, full, named("AssembleRequest"), nil, &places)
	checked := map[string]bool{}
	for _, p := range places {
		for _, f := range p.typ.fields {
			req := toValue(t, core.EncodeRequest(fullRequest()))
			obj := req
			for _, k := range p.path {
				switch k := k.(type) {
				case string:
					obj = obj.(map[string]any)[k]
				case int:
					obj = obj.([]any)[k]
				}
			}
			delete(obj.(map[string]any), f.wire)
			_, err := core.DecodeResponse(core.AssembleBytes(toMsgpack(t, nil, req)))
			ce, _ := err.(*core.Error)
			missing := ce != nil && ce.Code == core.CodeMissingField
			if missing == f.optional {
				t.Errorf("%v without %q: the core's answer is %v, but the generated %s has it optional=%v", p.path, f.wire, err, p.typ.py, f.optional)
			}
			checked[p.typ.py+"."+f.wire] = true
		}
	}
	for _, name := range []string{"AssembleRequest", "Message", "Block", "Injection", "Step"} {
		for _, f := range shapes[name].fields {
			if !checked[name+"."+f.wire] {
				t.Errorf("%s.%s was not taken away from any request", name, f.wire)
			}
		}
	}
}

// TestTypeDocsSpeakNoGo: the field docs come from Go's comments; none of
// them may name a Go field, one of core's Go names, or nil.
func TestTypeDocsSpeakNoGo(t *testing.T) {
	docs, err := fieldDocs(coreDir(t))
	if err != nil {
		t.Fatal(err)
	}
	// Go's names of two words and more (one word, like Text or Steps, is
	// also English).
	goWords := map[string]bool{"nil": true}
	twoWords := regexp.MustCompile(`^[A-Z][a-z]+[A-Z]`)
	for k := range docs {
		for _, w := range strings.Split(k, ".") {
			if twoWords.MatchString(w) {
				goWords[w] = true
			}
		}
	}
	for w := range goConsts {
		goWords[w] = true
	}
	for w := range goNames {
		goWords[w] = true
	}
	word := regexp.MustCompile(`[A-Za-z_]+`)
	files := map[string][]byte{}
	if err := addTypes(files); err != nil {
		t.Fatal(err)
	}
	for path, b := range files {
		var found []string
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "#:") && !strings.HasPrefix(line, "/**") && !strings.HasPrefix(line, `"""`) {
				continue
			}
			for _, w := range word.FindAllString(line, -1) {
				if goWords[w] {
					found = append(found, w+" in "+line)
				}
			}
		}
		sort.Strings(found)
		if len(found) > 0 {
			t.Errorf("%s: docs name Go:\n%s", path, strings.Join(found, "\n"))
		}
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"EntryID": "entry_id", "RunMessages": "run_messages", "A": "a", "MessageIndex": "message_index", "PrefixDigests": "prefix_digests"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTypesAreTheCachingAnswers: the cache report's and the export's keys
// and values, on a run with a break, an invalid request and every kind of
// recorded usage, and a prompt with system, user and assistant messages.
func TestTypesAreTheCachingAnswers(t *testing.T) {
	shapes := testShapes(t)
	var places []place
	other := fullRequest()
	other.RunMessages[0].Content[0].Text = "another system"
	reqs := [][]byte{core.EncodeRequest(fullRequest()), core.EncodeRequest(fullRequest()), {0x81, 0xa1, 'v'}, core.EncodeRequest(other), core.EncodeRequest(other)}
	args := msgp.AppendArrayHeader(nil, uint32(len(reqs)))
	for _, r := range reqs {
		args = msgp.AppendBytes(args, r)
	}
	usage := msgpackOf(t, []byte(`[{"cache_read_input_tokens":0},{"cache_read_input_tokens":12},null,{"prompt_tokens_details":{"cached_tokens":"x"}},null]`))
	req, err := core.AppendArgs(nil, abiCall(t, "cache_report"), args, usage)
	if err != nil {
		t.Fatal(err)
	}
	report := jsonValue(t, wirejson.AppendCacheReport(nil, req))
	walk(t, shapes, report, named("CacheReport"), nil, &places)
	for _, key := range []string{"error", "break", "usage"} { // each kind of call was there
		if !strings.Contains(fmt.Sprint(report), key+":map[") {
			t.Errorf("the report has no %s to check: %v", key, report)
		}
	}
	options := msgpackOf(t, []byte(`{"ttl":"1h","max_breakpoints":4,"lookback":1,"prompt_cache_key":"k"}`))
	for provider, body := range map[string]string{"anthropic": "AnthropicBody", "openai-chat": "OpenAIChatBody", "openai-responses": "OpenAIResponsesBody"} {
		req, err := core.AppendArgs(nil, abiCall(t, "export"), core.EncodeRequest(fullRequest()), msgp.AppendString(nil, provider), options)
		if err != nil {
			t.Fatal(err)
		}
		walk(t, shapes, toValue(t, wirejson.AppendExport(nil, req)), named(body), nil, &places)
	}
	walk(t, shapes, jsonValue(t, []byte(`{"ttl":"5m","max_breakpoints":2,"lookback":0,"prompt_cache_key":"k","body":{"model":"m"}}`)), named("ExportOptions"), nil, &places)
}

// abiCall is the call named name.
func abiCall(t *testing.T, name string) abi.Call {
	t.Helper()
	for _, c := range abi.Calls {
		if c.Name == name {
			return c.Op
		}
	}
	t.Fatalf("no call %s", name)
	return 0
}
