// Package limitreq builds the requests of the bounded-resources family
// (docs/SPEC.md §4 and §6; RATIONALE.md "Bounded resources"): each case at a scale given
// in bytes, so that `make test` runs them small and `make test.limits` at
// the full sizes. Every host's limits test (Go engines, Python,
// Node) gets its requests from here, through `go run
// ./internal/testing/limitreq/gen`, so that all hosts answer the same bytes.
package limitreq

import (
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/jsonstr"
	"github.com/tinylib/msgp/msgp"
)

// Case is one request of the family.
type Case struct {
	Name string
	// What the request exercises, for test logs.
	Description string
	Request     []byte
	// Code is the expected error code, "" for an ok response.
	Code core.Code
	// Path is the expected error path (when Code is not "").
	Path string
}

// FullSize is the size parameter of `make test.limits`: the full sizes.
const FullSize = 300 << 20

// junk returns n bytes of U+0001, the character JSON escapes the most (6
// bytes each in a JSON-quoted message).
func junk(n int) string { return strings.Repeat("\x01", n) }

const tmpl = "{observation}"

// excerptPath is the quoted excerpt of a junk key of n bytes in a path
// (docs/SPEC.md §6).
func excerptPath(n int) string { return jsonstr.QuoteExcerpt(junk(n)) }

// BadRole is a run message whose role is n bytes of U+0001.
func BadRole(n int) Case {
	req := core.EncodeRequest(&core.Request{RunMessages: []core.Message{{Role: junk(n)}}, ObservationTemplate: tmpl})
	return Case{Name: "bad-role", Description: "a role of " + size(n) + " of U+0001 (docs/SPEC.md §6)", Request: req, Code: core.CodeInvalidRole, Path: "run_messages[0].role"}
}

// BadBlockType is a block whose type is n bytes of U+0001.
func BadBlockType(n int) Case {
	req := core.EncodeRequest(&core.Request{RunMessages: []core.Message{{Role: core.RoleUser, Content: []core.Block{{Type: junk(n)}}}}, ObservationTemplate: tmpl})
	return Case{Name: "bad-block-type", Description: "a block type of " + size(n) + " of U+0001 (docs/SPEC.md §6)", Request: req, Code: core.CodeUnknownBlockType, Path: "run_messages[0].content[0].type"}
}

// UnknownKey is a request map with an unknown key of n bytes of U+0001.
func UnknownKey(n int) Case {
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendString(b, "observation_template")
	b = msgp.AppendString(b, tmpl)
	b = msgp.AppendString(b, junk(n))
	b = msgp.AppendNil(b)
	return Case{Name: "unknown-key", Description: "an unknown key of " + size(n) + " of U+0001 (docs/SPEC.md §6)", Request: b, Code: core.CodeUnknownField, Path: "[" + excerptPath(n) + "]"}
}

// RepeatedChannel is an injections map whose channel name, n bytes of
// U+0001, appears twice.
func RepeatedChannel(n int) Case {
	name := junk(n / 2)
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendString(b, "injections")
	b = msgp.AppendMapHeader(b, 2)
	for range 2 {
		b = msgp.AppendString(b, name)
		b = msgp.AppendArrayHeader(b, 0)
	}
	b = msgp.AppendString(b, "observation_template")
	b = msgp.AppendString(b, tmpl)
	return Case{Name: "repeated-channel", Description: "a channel of " + size(n/2) + " of U+0001 given twice (docs/SPEC.md §6)", Request: b, Code: core.CodeDuplicateKey, Path: "injections[" + excerptPath(n/2) + "]"}
}

// Template is a valid template of n bytes: "{observation}" and then ASCII
// text (docs/SPEC.md §4, at n = 1 GiB − 64), one step. The request has no "v" (it
// is optional) so that at n = 1 GiB − 64 it fits in the 1 GiB limit.
func Template(n int) Case {
	t := tmpl + strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789 {{}} ", n/42+1)[:n-len(tmpl)]
	if t[len(t)-1] == '{' || t[len(t)-1] == '}' && t[len(t)-2] != '}' {
		t = t[:len(t)-1] + "."
	}
	b := make([]byte, 0, len(t)+64)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "observation_template")
	b = msgp.AppendString(b, t)
	b = msgp.AppendString(b, "steps")
	b = msgp.AppendArrayHeader(b, 1)
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "raw_output")
	b = msgp.AppendString(b, "")
	b = msgp.AppendString(b, "observation")
	b = msgp.AppendString(b, "o")
	return Case{Name: "template", Description: "a valid template of " + size(n) + " (docs/SPEC.md §4)", Request: b}
}

// FieldsSteps is "{observation:.0}" × fields with steps empty steps (issue
// 10.3 at 100,000 × 10,000): about 16 bytes per field and 26 per step.
func FieldsSteps(fields, steps int) Case {
	req := core.EncodeRequest(&core.Request{ObservationTemplate: strings.Repeat("{observation:.0}", fields), Steps: make([]core.Step, steps)})
	return Case{Name: "fields-steps", Description: "a template of " + itoa(fields) + " fields over " + itoa(steps) + " steps (docs/SPEC.md §4)", Request: req}
}

// WideResponse is "{observation:1048576}" × fields and one step: a small
// request with a response of about fields MiB (docs/SPEC.md §7.6 at 600).
func WideResponse(fields int) Case {
	req := core.EncodeRequest(&core.Request{ObservationTemplate: strings.Repeat("{observation:1048576}", fields), Steps: []core.Step{{}}})
	return Case{Name: "wide-response", Description: itoa(fields) + " fields of width 1,048,576 (docs/SPEC.md §7.6)", Request: req}
}

// Cases returns the family at scale n bytes (the junk values; the other
// cases scale with it up to the full sizes) with a template of
// templateBytes.
func Cases(n, templateBytes int) []Case {
	fields := min(max(n/300, 100), 100_000) // the full 100,000 fields over 10,000 steps from 30 MB on
	return []Case{
		BadRole(n), BadBlockType(n), UnknownKey(n), RepeatedChannel(n),
		Template(templateBytes), FieldsSteps(fields, fields/10), WideResponse(min(max(n/(512<<10), 1), 600)),
	}
}

// FullTemplateBytes is the template of `make test.limits`: the largest
// whose request fits in the 1 GiB limit with one step (docs/SPEC.md §4).
const FullTemplateBytes = 1<<30 - 64

// DeepJSON is a request whose steps[0] is depth nested arrays around a
// string of strBytes bytes (the CLI's deep JSON): as JSON text and as msgpack, both
// malformed_request at steps[0] (a step must be a map).
func DeepJSON(depth, strBytes int) (jsonText, msgpack []byte, c Case) {
	str := strings.Repeat("x", strBytes)
	var j strings.Builder
	j.WriteString(`{"observation_template":"{observation}","steps":[`)
	j.WriteString(strings.Repeat("[", depth))
	j.WriteString(`"` + str + `"`)
	j.WriteString(strings.Repeat("]", depth))
	j.WriteString(`]}`)
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendString(b, "observation_template")
	b = msgp.AppendString(b, tmpl)
	b = msgp.AppendString(b, "steps")
	b = msgp.AppendArrayHeader(b, 1)
	for range depth {
		b = msgp.AppendArrayHeader(b, 1)
	}
	b = msgp.AppendString(b, str)
	c = Case{Name: "deep-json", Description: "steps[0] nested " + itoa(depth) + " deep around " + size(strBytes) + " (the CLI's deep JSON)",
		Request: b, Code: core.CodeMalformedRequest, Path: "steps[0]"}
	return []byte(j.String()), b, c
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return itoa(n>>20) + " MiB"
	case n >= 1<<10:
		return itoa(n>>10) + " KiB"
	}
	return itoa(n) + " bytes"
}

func itoa(n int) string { return strconv.Itoa(n) }
