package core_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
)

// field is one key and value of a test's add_step request, encoded by the
// test itself (msgp), so that the wire form is checked against docs/SPEC.md
// §7.3.1 and not against core's own encoder.
type field struct {
	key string
	val []byte
}

func enc(v any) []byte {
	b, err := msgp.AppendIntf(nil, v)
	if err != nil {
		panic(err)
	}
	return b
}

func mapOf(fields []field) []byte {
	b := msgp.AppendMapHeader(nil, uint32(len(fields)))
	for _, f := range fields {
		b = msgp.AppendString(b, f.key)
		b = append(b, f.val...)
	}
	return b
}

// stepFields is an add_step request of s on st, its fields in table order.
func stepFields(tmpl string, budget *int64, st core.PromptState, s core.Step) []field {
	fs := []field{{"v", enc(1)}, {"observation_template", enc(tmpl)}}
	if budget != nil {
		fs = append(fs, field{"max_prompt_chars", enc(*budget)})
	}
	prompt := mapOf([]field{{"steps", enc(st.Steps)}, {"messages", enc(st.Messages)}, {"prompt_chars", enc(st.PromptChars)}, {"response_bytes", enc(st.ResponseBytes)}})
	return append(fs, field{"prompt", prompt}, field{"step", mapOf([]field{{"raw_output", enc(s.RawOutput)}, {"observation", enc(s.Observation)}})})
}

// stateOf is the prompt state of an ok assemble response of a request of
// steps steps.
func stateOf(t *testing.T, resp []byte, steps int) core.PromptState {
	t.Helper()
	r, err := core.DecodeResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	return core.PromptState{Steps: steps, Messages: len(r.Messages), PromptChars: r.PromptChars, ResponseBytes: len(resp)}
}

// Starting from assemble's response of a prefix of a random request and
// folding add_step over its other steps (fields in random order) gives what
// one assemble of the whole request gives: the same messages, message_chars,
// prompt_chars, context_overflow, and response_bytes = the length of its
// response; a refused step gets the whole request's error.
func TestAddStepFoldEqualsAssemble(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 1))
	outcomes := map[string]int{}
	for range 4000 {
		full := randreq.Request(r)
		k := r.IntN(len(full.Steps) + 1)
		prefix := *full
		prefix.Steps = full.Steps[:k]
		resp := core.AssembleBytes(core.EncodeRequest(&prefix))
		if resp[7] != 0xc3 {
			continue // the prefix is refused: the prompt never starts
		}
		if r.IntN(4) == 0 && k < len(full.Steps) { // break a step the prompt adds
			s := &full.Steps[k+r.IntN(len(full.Steps)-k)]
			s.RawOutput, s.Observation = corrupt(r, s.RawOutput), corrupt(r, s.Observation)
		}
		got := stateOf(t, resp, k)
		head, _ := core.DecodeResponse(resp)
		msgs, chars, overflow := head.Messages, head.MessageChars, head.ContextOverflow
		var stepErr error
		for _, s := range full.Steps[k:] {
			fs := stepFields(full.ObservationTemplate, full.MaxPromptChars, got, s)
			r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
			sr, err := core.DecodeStepResponse(core.AddStepBytes(mapOf(fs)))
			if err != nil {
				stepErr = err
				break
			}
			msgs, chars, overflow = append(msgs, sr.Messages...), append(chars, sr.MessageChars...), sr.ContextOverflow
			got = sr.Prompt
		}
		whole := core.AssembleBytes(core.EncodeRequest(full))
		want, werr := core.DecodeResponse(whole)
		if werr != nil || stepErr != nil {
			if !reflect.DeepEqual(stepErr, werr) {
				t.Fatalf("%+v: add_step refuses with %#v, assemble of the whole with %#v", full, stepErr, werr)
			}
			outcomes[string(werr.(*core.Error).Code)]++
			continue
		}
		outcomes["ok"]++
		wantState := core.PromptState{Steps: len(full.Steps), Messages: len(want.Messages), PromptChars: want.PromptChars, ResponseBytes: len(whole)}
		if got != wantState || overflow != want.ContextOverflow || !slices.Equal(chars, want.MessageChars) || !reflect.DeepEqual(msgs, want.Messages) {
			t.Fatalf("%+v: the fold gives %+v (overflow %v, %v), assemble %+v (%v, %v)", full, got, overflow, chars, wantState, want.ContextOverflow, want.MessageChars)
		}
	}
	if outcomes["ok"] < 1000 || outcomes["invalid_utf8"] < 100 {
		t.Fatalf("too few cases: %v", outcomes)
	}
	t.Logf("outcomes: %v", outcomes)
}

func corrupt(r *rand.Rand, s string) string {
	switch r.IntN(4) {
	case 0:
		return s + "\xff"
	case 1:
		return "\xed\xa0\x80" + s // a surrogate
	}
	return s
}

// Every field of an add_step request is judged as docs/SPEC.md §7.3.1 says:
// the code and path of each bad request, written out here; the step's
// problems are those of steps[k] of an assemble request (message included).
func TestAddStepErrors(t *testing.T) {
	tmpl := "<{observation}>"
	base := core.AssembleBytes(core.EncodeRequest(&core.Request{ObservationTemplate: tmpl, Steps: make([]core.Step, 3)}))
	st := stateOf(t, base, 3)
	good := core.Step{RawOutput: "a", Observation: "b"}
	// with replaces (or, with a nil value, drops) the field key of a good request.
	with := func(key string, val []byte) []byte {
		var out []field
		found := false
		for _, f := range stepFields(tmpl, nil, st, good) {
			if f.key != key {
				out = append(out, f)
			} else if found = true; val != nil {
				out = append(out, field{key, val})
			}
		}
		if !found {
			out = append(out, field{key, val})
		}
		return mapOf(out)
	}
	prompt := func(steps, msgs, chars, size any) []byte {
		return mapOf([]field{{"steps", enc(steps)}, {"messages", enc(msgs)}, {"prompt_chars", enc(chars)}, {"response_bytes", enc(size)}})
	}
	stepMap := func(fs ...field) []byte { return mapOf(fs) }
	fs := stepFields(tmpl, nil, st, good)
	cases := []struct {
		name       string
		req        []byte
		code, path string
	}{
		{"empty", nil, "malformed_request", ""},
		{"not a map", enc(1), "malformed_request", ""},
		{"trailing", append(with("v", enc(1)), 0xc0), "malformed_request", ""},
		{"v 2", with("v", enc(2)), "unsupported_version", "v"},
		{"v str", with("v", enc("1")), "malformed_request", "v"},
		{"no v", with("v", nil), "missing_field", "v"},
		{"no template", with("observation_template", nil), "missing_field", "observation_template"},
		{"bad template", with("observation_template", enc("{obs}")), "invalid_template", "observation_template"},
		{"template bin", with("observation_template", enc([]byte("x"))), "malformed_request", "observation_template"},
		{"budget -1", with("max_prompt_chars", enc(-1)), "invalid_budget", "max_prompt_chars"},
		{"budget str", with("max_prompt_chars", enc("1")), "malformed_request", "max_prompt_chars"},
		{"no prompt", with("prompt", nil), "missing_field", "prompt"},
		{"prompt array", with("prompt", enc([]any{})), "malformed_request", "prompt"},
		{"steps -1", with("prompt", prompt(-1, st.Messages, st.PromptChars, st.ResponseBytes)), "malformed_request", "prompt.steps"},
		{"messages str", with("prompt", prompt(3, "6", st.PromptChars, st.ResponseBytes)), "malformed_request", "prompt.messages"},
		{"chars float", with("prompt", prompt(3, 6, 1.5, st.ResponseBytes)), "malformed_request", "prompt.prompt_chars"},
		{"bytes 2^64-1", with("prompt", prompt(3, 6, 0, uint64(1<<64-1))), "malformed_request", "prompt.response_bytes"},
		{"prompt unknown", with("prompt", mapOf([]field{{"step", enc(1)}})), "unknown_field", "prompt.step"},
		{"prompt duplicate", with("prompt", mapOf([]field{{"steps", enc(1)}, {"steps", enc(1)}})), "duplicate_key", "prompt.steps"},
		{"prompt no bytes", with("prompt", mapOf([]field{{"steps", enc(3)}, {"messages", enc(6)}, {"prompt_chars", enc(6)}})), "missing_field", "prompt.response_bytes"},
		{"too few bytes", with("prompt", prompt(3, 6, 6, 305)), "malformed_request", "prompt"},
		{"too many chars", with("prompt", prompt(3, 6, st.ResponseBytes, st.ResponseBytes)), "malformed_request", "prompt"},
		{"too few messages", with("prompt", prompt(3, 5, 6, st.ResponseBytes)), "malformed_request", "prompt"},
		{"over the limit", with("prompt", prompt(3, 6, 6, core.MaxResponseBytes+1)), "malformed_request", "prompt"},
		{"no step", with("step", nil), "missing_field", "step"},
		{"step int", with("step", enc(1)), "malformed_request", "steps[3]"},
		{"step no obs", with("step", stepMap(field{"raw_output", enc("a")})), "missing_field", "steps[3].observation"},
		{"step unknown", with("step", stepMap(field{"raw", enc("a")})), "unknown_field", "steps[3].raw"},
		{"step bad utf8", with("step", stepMap(field{"observation", enc("\xed\xa0\x80")}, field{"raw_output", enc("")})), "invalid_utf8", "steps[3].observation"},
		{"step first", mapOf(append([]field{fs[len(fs)-1]}, fs[:len(fs)-1]...)), "", ""},
		{"step first bad", mapOf([]field{{"step", stepMap(field{"raw_output", enc("\xff")})}, fs[0], fs[1], fs[2]}), "invalid_utf8", "steps[3].raw_output"},
		{"step first cut", mapOf([]field{{"step", []byte{0x82, 0xa1}}}), "malformed_request", "step"},
		{"unknown", mapOf(append(fs, field{"steps", enc(1)})), "unknown_field", "steps"},
		{"unknown odd", mapOf(append(fs, field{"a b", enc(1)})), "unknown_field", `["a b"]`},
		{"duplicate", mapOf(append(fs, fs[1])), "duplicate_key", "observation_template"},
	}
	minus1 := int64(-1)
	steps := func(s core.Step) []core.Step { return append(make([]core.Step, 3), s) }
	whole := map[string]core.Request{
		"bad template":   {ObservationTemplate: "{obs}", Steps: steps(good)},
		"budget -1":      {ObservationTemplate: tmpl, Steps: steps(good), MaxPromptChars: &minus1},
		"step bad utf8":  {ObservationTemplate: tmpl, Steps: steps(core.Step{Observation: "\xed\xa0\x80"})},
		"step first bad": {ObservationTemplate: tmpl, Steps: steps(core.Step{RawOutput: "\xff"})},
	}
	for _, c := range cases {
		_, err := core.DecodeStepResponse(core.AddStepBytes(c.req))
		if c.code == "" {
			if err != nil {
				t.Errorf("%s: %v, want ok", c.name, err)
			}
			continue
		}
		e, ok := err.(*core.Error)
		if !ok || string(e.Code) != c.code || e.Path != c.path {
			t.Errorf("%s: got %#v, want %s at %q", c.name, err, c.code, c.path)
			continue
		}
		if w, ok := whole[c.name]; ok {
			// The message and offset are assemble's for the same value.
			_, want := core.DecodeResponse(core.AssembleBytes(core.EncodeRequest(&w)))
			if !reflect.DeepEqual(err, want) {
				t.Errorf("%s: got %#v, assemble of the whole request %#v", c.name, err, want)
			}
		}
	}
}
