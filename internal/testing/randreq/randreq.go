// Package randreq generates seeded random requests for the cross-engine
// tests and the fuzzers' seeds: valid ones, with text from many scripts, and
// mutated ones that break the wire format in random places.
package randreq

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/polyloop/assembly/core"
)

// Alphabets random text is drawn from: ASCII, markup, quotes and escapes,
// controls, Latin-1, CJK, combining marks, astral emoji and ZWJ, noncharacters
// and private use, format characters.
var alphabets = [][]rune{
	[]rune("abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,;:-_"),
	[]rune("{}{}[]()<>!:\"'\\/`$#%&*"),
	[]rune("\x00\x01\x07\b\t\n\v\f\r\x1b\x7f\u0080\u0085\u009f"),
	[]rune("éüßñçøÅÆ£¥©®°±µ¶·¿×÷ÿ"),
	[]rune("漢字かなカナ한국어中文日本語"),
	[]rune("e\u0301a\u0308o\u0303\u0327\u20dd\u0345"),
	[]rune("😀👍🏽👨‍👩‍👧‍👦🇫🇷𝔘𝟘𐍈𓀀"),
	[]rune("\ufdd0\ufffe\uffff\U0001fffe\U0010ffff\ue000\U000f0000"),
	[]rune("\u200b\u200d\u2028\u2029\u00ad\ufeff\u061c\u0378\u0380"),
}

// Text returns a random string of up to max code points.
func Text(r *rand.Rand, max int) string {
	n := r.IntN(max + 1)
	var b strings.Builder
	a := alphabets[r.IntN(len(alphabets))]
	for range n {
		if r.IntN(8) == 0 {
			a = alphabets[r.IntN(len(alphabets))]
		}
		b.WriteRune(a[r.IntN(len(a))])
	}
	return b.String()
}

// Templates valid and invalid, covering conversions, specs and the rejection
// classes.
var Templates = []string{
	"{observation}",
	"Output:\n```\n{observation}\n```\n\n",
	"{observation!r}", "{observation!a}", "{observation!s}",
	"[{observation:>12}]", "[{observation:*^9.3}]", "{observation:012}", "{observation:.0}",
	"{observation!r:<20}", "{{literal}} {observation} }}{{",
	"{observation}{observation!a}",
	"{observation:\u0661\u0662}", "{observation:é>5}",
	// rejected
	"Output:", "{{observation}}", "{obs}", "{}", "{0}", "{observation", "observation}",
	"{observation!x}", "{observation:d}", "{observation:+}", "{observation:=5}", "{observation:,}",
	"{observation.upper}", "{observation[0]}", "{observation:{w}}", "{observation:2000000}",
	"{observation:.}", "{observation!}", "{observation!r",
}

var roles = []string{"user", "assistant", "system"}

func message(r *rand.Rand) core.Message {
	m := core.Message{Role: roles[r.IntN(3)]}
	if r.IntN(50) == 0 {
		m.Role = []string{"tool", "User", ""}[r.IntN(3)]
	}
	for range r.IntN(4) {
		b := core.Block{Type: core.BlockTypeText, Text: Text(r, 40)}
		if r.IntN(60) == 0 {
			b.Type = "image"
		}
		m.Content = append(m.Content, b)
	}
	return m
}

// Request returns a random request, valid most of the time.
func Request(r *rand.Rand) *core.Request {
	req := &core.Request{ObservationTemplate: Templates[r.IntN(len(Templates))]}
	if r.IntN(3) > 0 {
		req.ObservationTemplate = Templates[r.IntN(14)] // mostly valid
	}
	for range r.IntN(4) {
		req.RunMessages = append(req.RunMessages, message(r))
	}
	if r.IntN(2) == 0 {
		req.Injections = map[string][]core.Injection{}
		for range r.IntN(4) {
			ch := Text(r, 3)
			var entries []core.Injection
			for range r.IntN(3) {
				id := Text(r, 6)
				if id == "" && r.IntN(4) > 0 {
					id = "e"
				}
				entries = append(entries, core.Injection{EntryID: id, Content: Text(r, 30)})
			}
			req.Injections[ch] = entries
		}
	}
	for range r.IntN(3) {
		req.GoalMessages = append(req.GoalMessages, message(r))
	}
	for range r.IntN(6) {
		req.Steps = append(req.Steps, core.Step{RawOutput: Text(r, 30), Observation: Text(r, 40)})
	}
	if r.IntN(2) == 0 {
		b := int64(r.IntN(400)) - 5
		req.MaxPromptChars = &b
	}
	return req
}

// Bytes returns the wire bytes of a random request: canonical most of the
// time, else mutated (bytes flipped, cut, inserted or repeated).
func Bytes(r *rand.Rand) []byte {
	b := core.EncodeRequest(Request(r))
	if r.IntN(3) > 0 {
		return b
	}
	return Mutate(r, b)
}

// Mutate applies one to three random edits to b (it may alias b).
func Mutate(r *rand.Rand, b []byte) []byte {
	b = append([]byte(nil), b...)
	for range 1 + r.IntN(3) {
		if len(b) == 0 {
			return append(b, byte(r.IntN(256)))
		}
		i := r.IntN(len(b))
		switch r.IntN(6) {
		case 0:
			b[i] ^= byte(1 << r.IntN(8))
		case 1:
			b[i] = byte(r.IntN(256))
		case 2:
			b = b[:i]
		case 3:
			j := min(len(b), i+1+r.IntN(8))
			b = append(b[:i], b[j:]...)
		case 4:
			ins := []byte{0xc1, 0xc0, 0xc3, 0xa1, 'v', 0xed, 0xa0, 0x80, 0xff, 0xdb}
			b = append(b[:i], append([]byte{ins[r.IntN(len(ins))]}, b[i:]...)...)
		case 5:
			j := min(len(b), i+1+r.IntN(16))
			b = append(b[:j], append(append([]byte(nil), b[i:j]...), b[j:]...)...)
		}
	}
	return b
}

// corruptions break a string in the ways the wire rejects (docs/SPEC.md §2).
var corruptions = []func(string) string{
	func(s string) string { return s + "\xff" },
	func(s string) string { return "\xed\xa0\x80" + s },                       // a surrogate
	func(s string) string { return s[:len(s)/2] + "\xc0\xaf" + s[len(s)/2:] }, // overlong
	func(s string) string { return s + "\xf0\x9f\x98" },                       // cut short
	func(string) string { return "" },
	func(string) string { return "tool" },
	func(string) string { return "image" },
	func(s string) string { return strings.Repeat(s, 2) + "{" },
}

// MutateTyped breaks one to three random strings of req in place (invalid
// UTF-8, an empty or unknown value, a stray brace), sometimes a channel name or
// the budget: typed requests the wire rejects, for tests that compare typed
// APIs with the wire function.
func MutateTyped(r *rand.Rand, req *core.Request) {
	var fields []*string
	for i := range req.RunMessages {
		fields = append(fields, messageFields(&req.RunMessages[i])...)
	}
	for _, ch := range slices.Sorted(maps.Keys(req.Injections)) { // sorted: the same run for one seed
		entries := req.Injections[ch]
		for i := range entries {
			fields = append(fields, &entries[i].EntryID, &entries[i].Content)
		}
		if r.IntN(8) == 0 {
			delete(req.Injections, ch)
			req.Injections[corruptions[r.IntN(4)](ch)] = entries
		}
	}
	for i := range req.GoalMessages {
		fields = append(fields, messageFields(&req.GoalMessages[i])...)
	}
	for i := range req.Steps {
		fields = append(fields, &req.Steps[i].RawOutput, &req.Steps[i].Observation)
	}
	fields = append(fields, &req.ObservationTemplate)
	for range 1 + r.IntN(3) {
		f := fields[r.IntN(len(fields))]
		*f = corruptions[r.IntN(len(corruptions))](*f)
	}
	if r.IntN(6) == 0 {
		req.MaxPromptChars = new(int64)
		*req.MaxPromptChars = -1 - r.Int64N(1000)
	}
}

func messageFields(m *core.Message) []*string {
	f := []*string{&m.Role}
	for j := range m.Content {
		f = append(f, &m.Content[j].Type, &m.Content[j].Text)
	}
	return f
}
