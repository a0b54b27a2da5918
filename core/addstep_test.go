package core_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
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
	prompt := mapOf([]field{{"steps", enc(st.Steps)}, {"messages", enc(st.Messages)}, {"prompt_chars", enc(st.PromptChars)},
		{"response_bytes", enc(st.ResponseBytes)}, {"request_bytes", enc(st.RequestBytes)}})
	return append(fs, field{"prompt", prompt}, field{"step", mapOf([]field{{"raw_output", enc(s.RawOutput)}, {"observation", enc(s.Observation)}})})
}

// stateOf is the prompt state prompt_start answers for the canonical
// request req, whose assemble response is resp (ok) and which has steps
// steps; it checks prompt_start's answer against assemble's and the sizes
// against the lengths of resp and req (with an empty steps key when it has
// none).
func stateOf(t *testing.T, req, resp []byte, steps int) core.PromptState {
	t.Helper()
	r, err := core.DecodeResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	start := core.PromptStartBytes(req)
	sr, st, err := core.DecodePromptStart(start)
	if err != nil || !reflect.DeepEqual(sr, r) || start[0] != 0x8a || !bytes.Equal(start[1:len(resp)], resp[1:]) {
		t.Fatalf("prompt_start answers %v, %+v; assemble %+v", err, sr, r)
	}
	// The segments: the view's ends (an independent reading of the same response).
	seg, err := core.PromptSegments(start)
	_, v := core.AssembleView(req)
	if err != nil || v == nil || seg != (core.Segments{RunEnd: v.RunEnd, InjectionsEnd: v.InjectionsEnd, GoalEnd: v.GoalEnd}) {
		t.Fatalf("prompt_start segments %+v, %v; the view's %+v", seg, err, v)
	}
	want := core.PromptState{Steps: steps, Messages: len(r.Messages), PromptChars: r.PromptChars, ResponseBytes: len(resp), RequestBytes: len(req)}
	if steps == 0 {
		want.RequestBytes += len(enc("steps")) + len(enc([]any{}))
	}
	if st != want {
		t.Fatalf("prompt_start's state is %+v, want %+v", st, want)
	}
	return st
}

// Starting from prompt_start of a prefix of a random request and folding
// add_step over its other steps (fields in random order) gives what one
// assemble of the whole canonical request gives: the same messages,
// message_chars, prompt_chars, context_overflow, response_bytes = the length
// of its response and request_bytes = the length of the request so far; a
// step is refused exactly when assemble of the request up to it is, with
// its error response, byte for byte. The
// request and response limits are lowered at random around the sizes of
// the whole, so that both too_large refusals are met (docs/SPEC.md §7.3).
func TestAddStepFoldEqualsAssemble(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 1))
	outcomes := map[string]int{}
	for range 4000 {
		full := randreq.Request(r)
		k := r.IntN(len(full.Steps) + 1)
		prefix := *full
		prefix.Steps = full.Steps[:k]
		if r.IntN(4) == 0 && k < len(full.Steps) { // break a step the prompt adds
			s := &full.Steps[k+r.IntN(len(full.Steps)-k)]
			s.RawOutput, s.Observation = corrupt(r, s.RawOutput), corrupt(r, s.Observation)
		}
		func() {
			defer lowerLimits(r, &prefix, full)()
			outcomes[foldCase(t, r, full, k)]++
		}()
	}
	if outcomes["ok"] < 500 || outcomes["invalid_utf8"] < 100 || outcomes["too_large request"] < 200 || outcomes["too_large response"] < 200 {
		t.Fatalf("too few cases: %v", outcomes)
	}
	t.Logf("outcomes: %v", outcomes)
}

// lowerLimits lowers, in most cases, the request and the response limits to
// a size between those of the prefix and of the whole request.
func lowerLimits(r *rand.Rand, prefix, full *core.Request) (restore func()) {
	between := func(lo, hi int) int { return lo + r.IntN(max(hi-lo, 0)+8) }
	req, resp := core.MaxRequestBytes, core.MaxResponseBytes
	switch r.IntN(3) {
	case 0:
		req = between(len(core.EncodeRequest(prefix))+7, len(core.EncodeRequest(full)))
	case 1:
		resp = between(len(core.AssembleBytes(core.EncodeRequest(prefix))), len(core.AssembleBytes(core.EncodeRequest(full))))
	}
	return core.SetLimits(req, resp)
}

// foldCase folds the steps of full after the first k over prompt_start of
// the others, checks the result against assemble of the whole and returns
// the outcome.
func foldCase(t *testing.T, r *rand.Rand, full *core.Request, k int) string {
	t.Helper()
	prefix := *full
	prefix.Steps = full.Steps[:k]
	req := core.EncodeRequest(&prefix)
	resp := core.AssembleBytes(req)
	if resp[7] != 0xc3 {
		return "prefix refused" // the prompt never starts
	}
	got := stateOf(t, req, resp, k)
	head, _ := core.DecodeResponse(resp)
	msgs, chars, overflow := head.Messages, head.MessageChars, head.ContextOverflow
	var refused, whole []byte // a refused step's answer, and assemble's of the request up to it
	for i, s := range full.Steps[k:] {
		so := prefix
		so.Steps = full.Steps[:k+i+1]
		fs := stepFields(full.ObservationTemplate, full.MaxPromptChars, got, s)
		r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		ans := core.AddStepBytes(mapOf(fs))
		sr, err := core.DecodeStepResponse(ans)
		if err != nil {
			refused, whole = ans, core.AssembleBytes(core.EncodeRequest(&so))
			break
		}
		if sr.Prompt.RequestBytes != len(core.EncodeRequest(&so)) {
			t.Fatalf("%+v: request_bytes %d after step %d, the request is %d bytes", full, sr.Prompt.RequestBytes, k+i, len(core.EncodeRequest(&so)))
		}
		msgs, chars, overflow = append(msgs, sr.Messages...), append(chars, sr.MessageChars...), sr.ContextOverflow
		got = sr.Prompt
	}
	if refused == nil {
		whole = core.AssembleBytes(core.EncodeRequest(full))
	}
	want, werr := core.DecodeResponse(whole)
	if werr != nil || refused != nil {
		if !bytes.Equal(refused, whole) {
			t.Fatalf("%+v: add_step refuses with %q, assemble of the whole with %q", full, refused, whole)
		}
		e := werr.(*core.Error)
		if e.Code == core.CodeTooLarge {
			return map[bool]string{true: "too_large request", false: "too_large response"}[strings.HasPrefix(e.Message, "the request")]
		}
		return string(e.Code)
	}
	wantState := core.PromptState{Steps: len(full.Steps), Messages: len(want.Messages), PromptChars: want.PromptChars, ResponseBytes: len(whole),
		RequestBytes: len(core.EncodeRequest(full))}
	if len(full.Steps) == 0 {
		wantState.RequestBytes = got.RequestBytes // counted with an empty steps key (stateOf checks it)
	}
	if got != wantState || overflow != want.ContextOverflow || !slices.Equal(chars, want.MessageChars) || !reflect.DeepEqual(msgs, want.Messages) {
		t.Fatalf("%+v: the fold gives %+v (overflow %v, %v), assemble %+v (%v, %v)", full, got, overflow, chars, wantState, want.ContextOverflow, want.MessageChars)
	}
	return "ok"
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
	baseReq := core.EncodeRequest(&core.Request{ObservationTemplate: tmpl, Steps: make([]core.Step, 3)})
	st := stateOf(t, baseReq, core.AssembleBytes(baseReq), 3)
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
	prompt := func(steps, msgs, chars, size any, reqSize ...any) []byte {
		fs := []field{{"steps", enc(steps)}, {"messages", enc(msgs)}, {"prompt_chars", enc(chars)}, {"response_bytes", enc(size)}}
		if reqSize == nil {
			reqSize = []any{st.RequestBytes}
		}
		return mapOf(append(fs, field{"request_bytes", enc(reqSize[0])}))
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
		{"prompt no request bytes", with("prompt", mapOf([]field{{"steps", enc(3)}, {"messages", enc(6)}, {"prompt_chars", enc(6)}, {"response_bytes", enc(st.ResponseBytes)}})), "missing_field", "prompt.request_bytes"},
		{"request bytes -1", with("prompt", prompt(3, 6, 6, st.ResponseBytes, -1)), "malformed_request", "prompt.request_bytes"},
		{"request over the limit", with("prompt", prompt(3, 6, 6, st.ResponseBytes, core.MaxRequestBytes+8)), "malformed_request", "prompt"},
		{"request too small", with("prompt", prompt(3, 6, 6, st.ResponseBytes, 3*26-1)), "malformed_request", "prompt"},
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

// The size a prompt keeps of its request (docs/SPEC.md §7.3) is the length
// of the request's canonical encoding (EncodeRequest), with the empty steps
// key EncodeRequest leaves out when there are no steps.
func TestRequestSizeExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	for range 3000 {
		req := randreq.Request(r)
		if r.IntN(4) == 0 {
			req.Steps = nil
		}
		want := len(core.EncodeRequest(req))
		if len(req.Steps) == 0 {
			want += len(enc("steps")) + len(enc([]any{}))
		}
		if got := core.RequestSize(req); got != want {
			t.Fatalf("%+v: size %d, encoded %d", req, got, want)
		}
	}
}
