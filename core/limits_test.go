package core

import (
	"bytes"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/assembly/internal/testing/vectors"
)

// A request over 1 GiB is refused before decoding.
func TestTooLargeRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping a 1 GiB allocation")
	}
	big := make([]byte, MaxRequestBytes+1)
	_, err := DecodeResponse(AssembleBytes(big))
	e, ok := err.(*Error)
	if !ok || e.Code != CodeTooLarge || e.Path != "" {
		t.Fatalf("a request of 1 GiB + 1 byte: got %v, want too_large at \"\"", err)
	}
}

// A small request whose response would pass 1.5 GiB (a field of width
// 1,048,576 over 2,000 steps) is too_large, found before anything is
// allocated for the response.
func TestTooLargeResponse(t *testing.T) {
	steps := make([]Step, 2000)
	req := EncodeRequest(&Request{ObservationTemplate: "{observation:1048576}", Steps: steps})
	if len(req) > 64<<10 {
		t.Fatalf("the request should be small, it is %d bytes", len(req))
	}
	allocs := testing.AllocsPerRun(1, func() {
		_, err := DecodeResponse(AssembleBytes(req))
		e, ok := err.(*Error)
		if !ok || e.Code != CodeTooLarge {
			t.Fatalf("got %v, want too_large", err)
		}
	})
	if allocs > 200 {
		t.Fatalf("%v allocations: the response was built before the limit was checked", allocs)
	}
	// Just under the limit the same template is answered.
	steps = steps[:10]
	if _, err := DecodeResponse(AssembleBytes(EncodeRequest(&Request{ObservationTemplate: "{observation:1048576}", Steps: steps}))); err != nil {
		t.Fatalf("10 wide steps: %v", err)
	}
}

// InternalErrorResponse is a canonical error response with code internal.
func TestInternalErrorResponse(t *testing.T) {
	resp := InternalErrorResponse("boom")
	if err := checkCanonicalResponse(resp); err != nil {
		t.Fatal(err)
	}
	_, err := DecodeResponse(resp)
	if e, ok := err.(*Error); !ok || e.Code != CodeInternal || e.Message != "boom" || e.Path != "" {
		t.Fatalf("got %v", err)
	}
}

// withLimit runs f with the response limit lowered to n bytes.
func withLimit(t *testing.T, n int, f func()) {
	t.Helper()
	old := maxResponse
	maxResponse = n
	defer func() { maxResponse = old }()
	f()
}

// The response limit applies alike to AssembleBytes, Assemble and
// Prompt.AddStep (docs/SPEC.md §7.3): after k AddSteps the prompt is what Assemble
// of the k steps gives, too_large included, and a refused step leaves the
// prompt unchanged. The limit is lowered to 64 KiB to reach it cheaply.
func TestResponseLimitEverywhere(t *testing.T) {
	const limit = 64 << 10
	req := &Request{
		RunMessages:         []Message{{Role: RoleSystem, Content: []Block{{Type: BlockTypeText, Text: "sys"}}}},
		Injections:          map[string][]Injection{"c": {{EntryID: "e", Content: "inj"}}},
		ObservationTemplate: "<{observation:^1000}|{observation!r}>",
	}
	obs := func(i int) string { return strings.Repeat("é", i%7) }
	var steps []Step
	withLimit(t, limit, func() {
		// The first step count whose response is over the limit.
		k := 0
		for ; ; k++ {
			if k > 200 {
				t.Fatal("never too_large")
			}
			r := *req
			r.Steps = steps
			wire := AssembleBytes(EncodeRequest(&r))
			_, werr := DecodeResponse(wire)
			resp, terr := Assemble(&r)
			if werr != nil {
				if e, ok := werr.(*Error); !ok || e.Code != CodeTooLarge {
					t.Fatalf("%d steps: %v", k, werr)
				}
				if e, ok := terr.(*Error); !ok || e.Code != CodeTooLarge || e.Path != "" {
					t.Fatalf("%d steps: the wire response is too_large, Assemble gives %v", k, terr)
				}
				break
			}
			if len(wire) > limit {
				t.Fatalf("%d steps: a %d-byte response passed the %d-byte limit", k, len(wire), limit)
			}
			if terr != nil || !equalResponses(resp, mustDecode(t, wire)) {
				t.Fatalf("%d steps: Assemble gives %v, unlike the wire response", k, terr)
			}
			steps = append(steps, Step{RawOutput: "r", Observation: obs(k)})
		}
		if k < 10 {
			t.Fatalf("too_large after %d steps: the test needs more", k)
		}
		p, err := NewPrompt(req)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < k-1; i++ {
			if err := p.AddStep("r", obs(i)); err != nil {
				t.Fatalf("AddStep %d: %v", i, err)
			}
		}
		before := *p.Response()
		nMsgs := len(before.Messages)
		err = p.AddStep("r", obs(k-1))
		if e, ok := err.(*Error); !ok || e.Code != CodeTooLarge || e.Path != "" {
			t.Fatalf("AddStep %d: got %v, want too_large at \"\" as Assemble of %d steps", k-1, err, k)
		}
		after := p.Response()
		if len(after.Messages) != nMsgs || after.PromptChars != before.PromptChars {
			t.Fatal("a refused AddStep changed the prompt")
		}
		r := *req
		r.Steps = steps[:k-1]
		want, err := Assemble(&r)
		if err != nil || !equalResponses(want, after) {
			t.Fatalf("after %d AddSteps the prompt differs from Assemble (%v)", k-1, err)
		}
	})
}

func mustDecode(t *testing.T, b []byte) *Response {
	t.Helper()
	r, err := DecodeResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func equalResponses(a, b *Response) bool {
	return reflect.DeepEqual(a.Messages, b.Messages) && slices.Equal(a.MessageChars, b.MessageChars) &&
		a.PromptChars == b.PromptChars && a.ContextOverflow == b.ContextOverflow &&
		reflect.DeepEqual(a.Injected, b.Injected) && a.PrefixDigests == b.PrefixDigests
}

// A size sum that would overflow int64 is too_large, not a wrap-around
// (docs/SPEC.md §4): 2^21 fields of width 2^20 over 2^22 steps would be 2^63
// bytes. A 130 MB request: run by `make test.limits` (POLYLOOP_LIMITS=full).
func TestResponseSizeSaturates(t *testing.T) {
	if os.Getenv("POLYLOOP_LIMITS") != "full" {
		t.Skip("a 130 MB request: run by make test.limits (POLYLOOP_LIMITS=full)")
	}
	tmpl := strings.Repeat("{observation:1048576}", 1<<21)
	req := EncodeRequest(&Request{ObservationTemplate: tmpl, Steps: make([]Step, 1<<22)})
	_, err := DecodeResponse(AssembleBytes(req))
	if e, ok := err.(*Error); !ok || e.Code != CodeTooLarge {
		t.Fatalf("got %v, want too_large", err)
	}
	_, err = Assemble(&Request{ObservationTemplate: tmpl, Steps: make([]Step, 1<<22)})
	if e, ok := err.(*Error); !ok || e.Code != CodeTooLarge {
		t.Fatalf("Assemble: got %v, want too_large", err)
	}
}

// encodedSize is the exact length of the response (so too_large means "the
// canonical response would be longer than MaxResponseBytes", a rule every
// host's prompt can apply), and NewPrompt keeps it: on every ok
// vector and on requests with injections and large counts.
func TestEncodedSizeExact(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	var reqs [][]byte
	for _, c := range cases {
		if c.Response != nil {
			reqs = append(reqs, c.Request)
		}
	}
	inj := map[string][]Injection{}
	for i := range 300 {
		inj[strings.Repeat("c", i%40+1)] = append(inj[strings.Repeat("c", i%40+1)], Injection{EntryID: strings.Repeat("e", i+1), Content: "x"})
	}
	reqs = append(reqs, EncodeRequest(&Request{Injections: inj, Steps: make([]Step, 40000), ObservationTemplate: "{observation:300}"}))
	for i, b := range reqs {
		sc := new(scratch)
		req, tmpl, derr := decodeRequest(append([]byte(nil), b...), sc)
		if derr != nil {
			t.Fatalf("request %d: %v", i, derr)
		}
		a := build(req, tmpl, sc)
		size, serr := a.encodedSize()
		resp := AssembleBytes(b)
		if serr != nil || size != len(resp) {
			t.Fatalf("request %d: encodedSize %d (%v), the response is %d bytes", i, size, serr, len(resp))
		}
		dreq, err := DecodeRequest(b)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPrompt(dreq)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.st.ResponseBytes; got != len(resp) {
			t.Fatalf("request %d: the prompt keeps %d response bytes, the response is %d", i, got, len(resp))
		}
	}
}

// AddStepBytes applies the response limit as AssembleBytes of the whole
// request does: folding it over steps from the response of no steps, each
// step is refused (with the same error response) exactly when the whole
// request's response is too_large, and otherwise response_bytes is that
// response's length. The limit is lowered to reach it cheaply, at sizes
// around the array-header and uint boundaries (15/16 messages, 127/128 and
// 65535/65536 code points).
func TestAddStepResponseLimit(t *testing.T) {
	budget := int64(300)
	for _, limit := range []int{2 << 10, 9 << 10, 64 << 10, 200 << 10} {
		req := Request{
			RunMessages:         []Message{{Role: RoleSystem, Content: []Block{{Type: BlockTypeText, Text: "sys"}}}},
			Injections:          map[string][]Injection{"c": {{EntryID: "e", Content: "inj"}}},
			ObservationTemplate: "<{observation:^100}|{observation!r}>",
			MaxPromptChars:      &budget,
		}
		withLimit(t, limit, func() {
			resp := AssembleBytes(EncodeRequest(&req))
			st := PromptState{Messages: 3, PromptChars: 6, ResponseBytes: len(resp)}
			for k := 0; ; k++ {
				s := Step{RawOutput: "r", Observation: strings.Repeat("é", k%7)}
				got := AddStepBytes(EncodeAddStepRequest(req.ObservationTemplate, req.MaxPromptChars, st, s))
				req.Steps = append(req.Steps, s)
				whole := AssembleBytes(EncodeRequest(&req))
				sr, err := DecodeStepResponse(got)
				if _, werr := DecodeResponse(whole); werr != nil {
					if !bytes.Equal(got, whole) || werr.(*Error).Code != CodeTooLarge {
						t.Fatalf("limit %d, step %d: the whole request gives %v, add_step %v", limit, k, werr, err)
					}
					if k < 3 {
						t.Fatalf("limit %d: too_large at step %d: the test needs more", limit, k)
					}
					return
				}
				if err != nil || sr.Prompt.ResponseBytes != len(whole) {
					t.Fatalf("limit %d, step %d: add_step %+v %v, the whole response is %d bytes", limit, k, sr, err, len(whole))
				}
				st = sr.Prompt
			}
		})
	}
}
