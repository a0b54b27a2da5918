package core_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/polyloop/assembly/core"

	"github.com/polyloop/assembly/internal/testing/randreq"
)

// wireError is what core.AssembleBytes answers for the canonical encoding of req.
func wireError(t *testing.T, req *core.Request) *core.Error {
	t.Helper()
	_, err := core.DecodeResponse(core.AssembleBytes(core.EncodeRequest(req)))
	if err == nil {
		return nil
	}
	e, ok := err.(*core.Error)
	if !ok {
		t.Fatalf("the wire response does not decode: %v", err)
	}
	return e
}

// typedError is the error of core.Assemble(req), which core.NewPrompt must give too.
func typedError(t *testing.T, req *core.Request) *core.Error {
	t.Helper()
	_, err := core.Assemble(req)
	_, perr := core.NewPrompt(req)
	if !reflect.DeepEqual(err, perr) {
		t.Fatalf("core.Assemble gives %#v, core.NewPrompt %#v", err, perr)
	}
	if err == nil {
		return nil
	}
	return err.(*core.Error)
}

func budget(n int64) *int64 { return &n }

// Every error a typed request can have, one case per rule of the decoder the
// typed check runs: the typed error equals the wire error of its encoding.
func TestTypedErrorsEqualWireErrors(t *testing.T) {
	text := func(s string) []core.Block { return []core.Block{{Type: core.BlockTypeText, Text: s}} }
	ok := []core.Message{{Role: core.RoleUser, Content: text("hi")}}
	tmpl := "{observation}"
	cases := []struct {
		name   string
		req    core.Request
		code   core.Code
		path   string
		offset int
	}{
		{"role not UTF-8", core.Request{RunMessages: []core.Message{{Role: "us\xffer"}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, "run_messages[0].role", -1},
		{"unknown role", core.Request{RunMessages: []core.Message{ok[0], {Role: "tool"}}, ObservationTemplate: tmpl}, core.CodeInvalidRole, "run_messages[1].role", -1},
		{"block type not UTF-8", core.Request{GoalMessages: []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: "\xc0\x80", Text: ""}}}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, "goal_messages[0].content[0].type", -1},
		{"unknown block type", core.Request{GoalMessages: []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: "text"}, {Type: "image"}}}}, ObservationTemplate: tmpl}, core.CodeUnknownBlockType, "goal_messages[0].content[1].type", -1},
		{"block text not UTF-8", core.Request{RunMessages: []core.Message{{Role: core.RoleUser, Content: text("a\xed\xa0\x80")}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, "run_messages[0].content[0].text", -1},
		{"channel name not UTF-8", core.Request{Injections: map[string][]core.Injection{"a\xff": {{EntryID: "e", Content: ""}}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, "injections", -1},
		{"entry id not UTF-8", core.Request{Injections: map[string][]core.Injection{"b": {{EntryID: "e"}}, "a": {{EntryID: "e"}, {EntryID: "\xf4\x90\x80\x80"}}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, `injections["a"][1].entry_id`, -1},
		{"empty entry id", core.Request{Injections: map[string][]core.Injection{"z": {{EntryID: ""}}, "é": {{EntryID: ""}}}, ObservationTemplate: tmpl}, core.CodeInvalidEntryID, `injections["z"][0].entry_id`, -1},
		{"entry content not UTF-8", core.Request{Injections: map[string][]core.Injection{"": {{EntryID: "e", Content: "\xe2\x82"}}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, `injections[""][0].content`, -1},
		{"raw_output not UTF-8", core.Request{Steps: []core.Step{{}, {RawOutput: "\xff"}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, "steps[1].raw_output", -1},
		{"observation not UTF-8", core.Request{Steps: []core.Step{{Observation: "\xed\xbf\xbf"}}, ObservationTemplate: tmpl}, core.CodeInvalidUTF8, "steps[0].observation", -1},
		{"template not UTF-8", core.Request{ObservationTemplate: "{observation}\xff"}, core.CodeInvalidUTF8, "observation_template", -1},
		{"invalid template", core.Request{ObservationTemplate: "é {observation!x}"}, core.CodeInvalidTemplate, "observation_template", 15},
		{"template without field", core.Request{ObservationTemplate: ""}, core.CodeInvalidTemplate, "observation_template", 0},
		{"negative budget", core.Request{ObservationTemplate: tmpl, MaxPromptChars: budget(-1)}, core.CodeInvalidBudget, "max_prompt_chars", -1},
		{"first problem in table order", core.Request{Steps: []core.Step{{RawOutput: "\xff"}}, RunMessages: []core.Message{{Role: "x"}}, ObservationTemplate: "x", MaxPromptChars: budget(-5)}, core.CodeInvalidRole, "run_messages[0].role", -1},
		{"template before budget", core.Request{ObservationTemplate: "x", MaxPromptChars: budget(-5)}, core.CodeInvalidTemplate, "observation_template", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := typedError(t, &c.req)
			if got == nil || got.Code != c.code || got.Path != c.path || got.Offset != c.offset {
				t.Fatalf("core.Assemble gives %#v, want %s at %q offset %d", got, c.code, c.path, c.offset)
			}
			if want := wireError(t, &c.req); *got != *want {
				t.Fatalf("typed error %#v, wire error %#v", got, want)
			}
		})
	}
}

func TestTypedNil(t *testing.T) {
	if _, err := core.Assemble(nil); err == nil || err.(*core.Error).Code != core.CodeMalformedRequest {
		t.Fatalf("core.Assemble(nil) = %v, want malformed_request", err)
	}
	if _, err := core.NewPrompt(nil); err == nil || err.(*core.Error).Code != core.CodeMalformedRequest {
		t.Fatalf("core.NewPrompt(nil) = %v, want malformed_request", err)
	}
}

// core.ValidateTemplate reports what assembling a request holding the template
// reports: path observation_template, the wire's message and offset.
func TestValidateTemplateIsTheWireVerdict(t *testing.T) {
	for _, tmpl := range append([]string{"abc {", "{observation}\xff", "\xed\xa0\x80", "", "é😀{obs}"}, randreq.Templates...) {
		verr := core.ValidateTemplate(tmpl)
		want := wireError(t, &core.Request{ObservationTemplate: tmpl})
		if want == nil {
			if verr != nil {
				t.Errorf("%q: core.ValidateTemplate %v, the wire accepts", tmpl, verr)
			}
			continue
		}
		if e, ok := verr.(*core.Error); !ok || *e != *want {
			t.Errorf("%q: core.ValidateTemplate %#v, the wire says %#v", tmpl, verr, want)
		}
	}
	if e := core.ValidateTemplate("abc {").(*core.Error); e.Path != "observation_template" || e.Offset != 4 {
		t.Fatalf(`core.ValidateTemplate("abc {") = %#v, want path observation_template offset 4`, e)
	}
}

// A refused step gets the error the decoder gives steps[k] of a request.
func TestAddStepErrorsEqualWireErrors(t *testing.T) {
	p, err := core.NewPrompt(&core.Request{ObservationTemplate: "{observation}", Steps: []core.Step{{}, {}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []core.Step{{RawOutput: "\xff"}, {Observation: "ok\xc3"}, {RawOutput: "\xe0\x80\x80", Observation: "\xff"}} {
		got := p.AddStep(s.RawOutput, s.Observation)
		want := wireError(t, &core.Request{ObservationTemplate: "{observation}", Steps: []core.Step{{}, {}, s}})
		if e, ok := got.(*core.Error); !ok || *e != *want {
			t.Fatalf("AddStep(%q, %q) = %#v, the wire says %#v", s.RawOutput, s.Observation, got, want)
		}
	}
	if n := len(p.Response().Messages); n != 4 {
		t.Fatalf("refused steps changed the prompt: %d messages", n)
	}
}

// The property of docs/SPEC.md §7.2: on random and mutated typed requests, core.Assemble
// and core.AssembleBytes(core.EncodeRequest) agree: the same error (code, path,
// message, offset), or the same response.
func TestTypedAgreesWithWire(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 9))
	codes := map[core.Code]int{}
	for i := range 20000 {
		req := randreq.Request(r)
		if i%4 != 0 {
			randreq.MutateTyped(r, req)
		}
		resp, err := core.Assemble(req)
		wire := core.AssembleBytes(core.EncodeRequest(req))
		wresp, werr := core.DecodeResponse(wire)
		if err != nil || werr != nil {
			e, ok := err.(*core.Error)
			we, wok := werr.(*core.Error)
			if !ok || !wok || *e != *we {
				t.Fatalf("request %d: typed %#v, wire %#v", i, err, werr)
			}
			codes[e.Code]++
			continue
		}
		codes["ok"]++
		if !reflect.DeepEqual(resp, wresp) {
			t.Fatalf("request %d: typed response %+v, wire %+v", i, resp, wresp)
		}
	}
	for _, c := range []core.Code{"ok", core.CodeInvalidUTF8, core.CodeInvalidRole, core.CodeUnknownBlockType, core.CodeInvalidEntryID, core.CodeInvalidBudget, core.CodeInvalidTemplate} {
		if codes[c] < 50 {
			t.Errorf("only %d requests gave %s: %v", codes[c], c, codes)
		}
	}
	t.Logf("outcomes: %v", codes)
}
