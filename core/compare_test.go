package core_test

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyloop/assembly/core"
	"github.com/tinylib/msgp/msgp"
)

// The comparison (docs/SPEC.md §7.9) against an oracle built from the
// request's own structure: the message list of docs/SPEC.md §3 written out
// by hand here, one character changed at a random place, and the answer
// must point at that place.

// expected lays out a request's messages as docs/SPEC.md §3 says, with the
// segment of each (the template is "{observation}", so an observation
// renders as itself).
type expected struct {
	roles    []string
	texts    [][]string
	segments []string
}

func (e *expected) add(role, seg string, texts ...string) {
	e.roles, e.texts, e.segments = append(e.roles, role), append(e.texts, texts), append(e.segments, seg)
}

func layout(r *core.Request) *expected {
	e := &expected{}
	for _, m := range r.RunMessages {
		e.add(m.Role, "run", blockTexts(m)...)
	}
	var chans []string
	for c := range r.Injections {
		chans = append(chans, c)
	}
	sort.Strings(chans)
	for _, c := range chans {
		for _, in := range r.Injections[c] {
			e.add("user", "injections", in.Content)
		}
	}
	for _, m := range r.GoalMessages {
		e.add(m.Role, "goal", blockTexts(m)...)
	}
	for _, s := range r.Steps {
		e.add("assistant", "history", s.RawOutput)
		e.add("user", "history", s.Observation)
	}
	return e
}

func blockTexts(m core.Message) []string {
	var t []string
	for _, b := range m.Content {
		t = append(t, b.Text)
	}
	return t
}

var alphabet = []rune("ab é€😀\n")

func randText(r *rand.Rand) string {
	var sb strings.Builder
	for range r.IntN(6) {
		sb.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return sb.String()
}

func randMessages(r *rand.Rand, n int) []core.Message {
	var ms []core.Message
	for range r.IntN(n) {
		m := core.Message{Role: []string{"system", "user", "assistant"}[r.IntN(3)]}
		for range 1 + r.IntN(3) {
			m.Content = append(m.Content, core.Block{Type: "text", Text: randText(r)})
		}
		ms = append(ms, m)
	}
	return ms
}

func randRequest(r *rand.Rand) *core.Request {
	req := &core.Request{RunMessages: randMessages(r, 3), GoalMessages: randMessages(r, 3), ObservationTemplate: "{observation}",
		Injections: map[string][]core.Injection{}}
	for _, c := range []string{"b", "a", "c"}[:r.IntN(4)] {
		for k := range r.IntN(3) {
			req.Injections[c] = append(req.Injections[c], core.Injection{EntryID: c + string(rune('0'+k)), Content: randText(r)})
		}
	}
	for range r.IntN(4) {
		req.Steps = append(req.Steps, core.Step{RawOutput: randText(r), Observation: randText(r)})
	}
	return req
}

// recorded writes e's messages as a recorded list; a one-block message as
// a str content when asStr.
func recorded(e *expected, asStr bool) []byte {
	b := msgp.AppendArrayHeader(nil, uint32(len(e.roles)))
	for i, role := range e.roles {
		b = msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(b, 2), "role"), role)
		b = msgp.AppendString(b, "content")
		if asStr && len(e.texts[i]) == 1 {
			b = msgp.AppendString(b, e.texts[i][0])
			continue
		}
		b = msgp.AppendArrayHeader(b, uint32(len(e.texts[i])))
		for _, t := range e.texts[i] {
			b = msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(b, 2), "type"), "text")
			b = msgp.AppendString(msgp.AppendString(b, "text"), t)
		}
	}
	return b
}

func chars(texts []string) int {
	n := 0
	for _, t := range texts {
		n += utf8.RuneCountInString(t)
	}
	return n
}

// mutate changes one code point of a random non-empty text of e (in
// place), returning the message, the code point offset in its joined text,
// and false when every text is empty.
func mutate(r *rand.Rand, e *expected) (msg, char int, ok bool) {
	var places [][2]int
	for i, ts := range e.texts {
		for k, t := range ts {
			if t != "" {
				places = append(places, [2]int{i, k})
			}
		}
	}
	if len(places) == 0 {
		return 0, 0, false
	}
	p := places[r.IntN(len(places))]
	rs := []rune(e.texts[p[0]][p[1]])
	j := r.IntN(len(rs))
	rs[j] = map[bool]rune{true: 'Z', false: 'Y'}[rs[j] != 'Z']
	e.texts[p[0]][p[1]] = string(rs)
	return p[0], chars(e.texts[p[0]][:p[1]]) + j, true
}

func TestCompareOneChangedCharacter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for n := range 3000 {
		req := randRequest(r)
		e := layout(req)
		reqBytes := core.EncodeRequest(req)
		c, err := core.Compare(recorded(e, n%2 == 0), reqBytes)
		if err != nil || !c.Identical || c.First != nil || c.CacheablePrefixChars != c.B.PromptChars {
			t.Fatalf("case %d: an unchanged recording is not identical: %+v %v", n, c, err)
		}
		msg, char, ok := mutate(r, e)
		if !ok {
			continue
		}
		c, err = core.Compare(recorded(e, n%3 == 0), reqBytes)
		if err != nil {
			t.Fatal(err)
		}
		checkPointsAt(t, n, c, e, msg, char, false)
	}
}

// checkPointsAt checks that c points at code point char of message msg of
// e, the mutated side (B when mutatedB, else A).
func checkPointsAt(t *testing.T, n int, c *core.Comparison, e *expected, msg, char int, mutatedB bool) {
	t.Helper()
	d := c.First
	if c.Identical || d == nil || d.Message != msg || d.Char != char || d.Kind != core.DiffText || d.Segment != e.segments[msg] {
		t.Fatalf("case %d: want message %d char %d (%s), got %+v", n, msg, char, e.segments[msg], d)
	}
	var keep int64
	for _, ts := range e.texts[:msg] {
		keep += int64(chars(ts))
	}
	if c.CacheablePrefixChars != keep+int64(char) {
		t.Fatalf("case %d: cacheable prefix %d, want %d", n, c.CacheablePrefixChars, keep+int64(char))
	}
	wantStep := -1
	if e.segments[msg] == "history" {
		first := 0
		for first < len(e.segments) && e.segments[first] != "history" {
			first++
		}
		wantStep = (msg - first) / 2
	}
	if d.Step != wantStep {
		t.Fatalf("case %d: step %d, want %d", n, d.Step, wantStep)
	}
	for k, seg := range []string{"run", "injections", "goal"} {
		end := 0
		for end < len(e.segments) && segRank(e.segments[end]) <= k {
			end++
		}
		if want := msg >= end; c.Digests[k] == nil || *c.Digests[k] != want {
			t.Fatalf("case %d: %s digest match %v, want %v", n, seg, c.Digests[k], want)
		}
	}
	changed, excerpt := string([]rune(strings.Join(e.texts[msg], ""))[char]), d.A
	if mutatedB {
		excerpt = d.B
	}
	if !strings.HasPrefix(excerpt, changed) {
		t.Fatalf("case %d: excerpt %q does not start at the changed character %q", n, excerpt, changed)
	}
}

func segRank(s string) int {
	return map[string]int{"run": 0, "injections": 1, "goal": 2, "history": 3}[s]
}

// Two requests differing in one character: the prefix digests the two
// responses carry agree with where the difference is.
func TestCompareTwoRequests(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	for n := range 1000 {
		req := randRequest(r)
		e := layout(req)
		msg, char, ok := mutate(r, e)
		if !ok {
			continue
		}
		b := toRequest(req, e)
		c, err := core.Compare(core.EncodeRequest(req), core.EncodeRequest(b))
		if err != nil {
			t.Fatal(err)
		}
		if c.A.Kind != "request" || c.B.Kind != "request" {
			t.Fatalf("kinds %+v %+v", c.A, c.B)
		}
		checkPointsAt(t, n, c, e, msg, char, true)
	}
}

// toRequest is req with the texts of e written back (e is layout(req),
// edited).
func toRequest(req *core.Request, e *expected) *core.Request {
	out := *req
	i := 0
	copyMsgs := func(ms []core.Message) []core.Message {
		var o []core.Message
		for _, m := range ms {
			nm := core.Message{Role: m.Role}
			for _, t := range e.texts[i] {
				nm.Content = append(nm.Content, core.Block{Type: "text", Text: t})
			}
			o, i = append(o, nm), i+1
		}
		return o
	}
	out.RunMessages = copyMsgs(req.RunMessages)
	var chans []string
	for c := range req.Injections {
		chans = append(chans, c)
	}
	sort.Strings(chans)
	out.Injections = map[string][]core.Injection{}
	for _, c := range chans {
		for _, in := range req.Injections[c] {
			out.Injections[c] = append(out.Injections[c], core.Injection{EntryID: in.EntryID, Content: e.texts[i][0]})
			i++
		}
	}
	out.GoalMessages = copyMsgs(req.GoalMessages)
	out.Steps = nil
	for range req.Steps {
		out.Steps = append(out.Steps, core.Step{RawOutput: e.texts[i][0], Observation: e.texts[i+1][0]})
		i += 2
	}
	return &out
}

func answer(t *testing.T, a, b string) map[string]any {
	t.Helper()
	req := msgp.AppendMapHeader(nil, 2)
	req = msgp.AppendString(msgp.AppendString(req, "a"), a)
	req = msgp.AppendString(msgp.AppendString(req, "b"), b)
	var m map[string]any
	ans := core.AppendCompareBytes(nil, req, testFromJSON)
	if err := json.Unmarshal(ans, &m); err != nil {
		t.Fatalf("not JSON: %q", ans)
	}
	return m
}

const reqAB = `{"v":1,"run_messages":[{"role":"system","content":[{"type":"text","text":"ab"},{"type":"text","text":"c"}]}],
"goal_messages":[{"role":"user","content":[{"type":"text","text":"goal"}]}],"steps":[{"raw_output":"x","observation":"y"}],
"observation_template":"{observation}"}`

func TestCompareHandBuilt(t *testing.T) {
	for _, c := range []struct {
		name, a, want string
	}{
		{"identical", `[{"role":"system","content":[{"type":"text","text":"ab"},{"type":"text","text":"c"}]},{"role":"user","content":"goal"},
		{"role":"assistant","content":"x"},{"role":"user","content":"y"}]`, `null`},
		{"role", `[{"role":"user","content":"abc"}]`,
			`{"message":0,"char":0,"kind":"role","segment":"run","step":null,"role_a":"user","role_b":"system","excerpt_before":"","excerpt_a":"abc","excerpt_b":"abc"}`},
		{"blocks", `[{"role":"system","content":"abc"}]`,
			`{"message":0,"char":2,"kind":"blocks","segment":"run","step":null,"role_a":"system","role_b":"system","excerpt_before":"ab","excerpt_a":"c","excerpt_b":"c"}`},
		{"length", `[{"role":"system","content":[{"type":"text","text":"ab"},{"type":"text","text":"c"}]},{"role":"user","content":"goal"}]`,
			`{"message":2,"char":0,"kind":"length","segment":"history","step":0,"role_a":null,"role_b":"assistant","excerpt_before":"","excerpt_a":null,"excerpt_b":"x"}`},
		{"text", `[{"role":"system","content":[{"type":"text","text":"ab"},{"type":"text","text":"c"}]},{"role":"user","content":"goal!"}]`,
			`{"message":1,"char":4,"kind":"text","segment":"goal","step":null,"role_a":"user","role_b":"user","excerpt_before":"goal","excerpt_a":"!","excerpt_b":""}`},
	} {
		got := answer(t, c.a, reqAB)
		var want any
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if g, _ := json.Marshal(got["first_difference"]); string(g) != mustJSON(want) {
			t.Errorf("%s: first_difference\n got  %s\n want %s", c.name, g, mustJSON(want))
		}
	}
}

// testFromJSON converts JSON text to msgpack (integers as ints), as
// wirejson does for the module; here without importing it.
func testFromJSON(text []byte) ([]byte, *core.Error) {
	d := json.NewDecoder(strings.NewReader(string(text)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, &core.Error{Code: core.CodeMalformedRequest, Message: err.Error(), Offset: -1}
	}
	out, err := msgp.AppendIntf(nil, ints(v))
	if err != nil {
		panic(err)
	}
	return out, nil
}

func ints(v any) any {
	switch x := v.(type) {
	case json.Number:
		n, _ := x.Int64()
		return n
	case []any:
		for k := range x {
			x[k] = ints(x[k])
		}
	case map[string]any:
		for k := range x {
			x[k] = ints(x[k])
		}
	}
	return v
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestCompareAnswerFields(t *testing.T) {
	got := answer(t, `[{"role":"system","content":"abc"}]`, reqAB)
	want := `{"a":{"kind":"messages","messages":1,"prompt_chars":3},"b":{"kind":"request","messages":4,"prompt_chars":9},` +
		`"cacheable_prefix_chars":2,"identical":false,"prefix_digests":{"goal":false,"injections":false,"run":false}}`
	delete(got, "first_difference")
	if mustJSON(got) != want {
		t.Fatalf("got  %s\nwant %s", mustJSON(got), want)
	}
	both := answer(t, `[]`, `[]`)
	if mustJSON(both["prefix_digests"]) != `{"goal":null,"injections":null,"run":null}` || both["identical"] != true {
		t.Fatalf("two empty lists: %s", mustJSON(both))
	}
}

func TestCompareErrorsNameTheSide(t *testing.T) {
	for _, c := range []struct{ a, b, code, path string }{
		{`[{"role":"user"}]`, reqAB, "missing_field", "a[0].content"},
		{`[]`, `{"v":2}`, "unsupported_version", "b.v"},
		{`[{"role":"user","content":[{"type":"image","text":"x"}]}]`, `[]`, "unknown_block_type", "a[0].content[0].type"},
		{`7`, `[]`, "malformed_request", "a"},
		{`{"v":1,"observation_template":"{x}"}`, `[]`, "invalid_template", "a.observation_template"},
		{`[]`, `[{"role":"user","content":"x","extra":1}]`, "unknown_field", "b[0].extra"},
	} {
		e, _ := answer(t, c.a, c.b)["error"].(map[string]any)
		if e["code"] != c.code || e["path"] != c.path {
			t.Errorf("%s vs %s: got %v, want %s at %s", c.a, c.b, e, c.code, c.path)
		}
	}
	req := msgp.AppendString(msgp.AppendString(msgp.AppendMapHeader(nil, 1), "a"), "[]")
	if ans := string(core.AppendCompareBytes(nil, req, testFromJSON)); !strings.Contains(ans, `"code":"missing_field","message":`) {
		t.Fatalf("no b: %s", ans)
	}
}

// TestCompareBinSides: a side given as msgpack bytes in a bin (what a host
// sends for its bytes) is judged on its own: the same answer as the value
// itself, and an empty side (bytes or JSON text) or one with bytes after its
// value is said as such, at the side's path, never as a cut or misread
// compare request.
func TestCompareBinSides(t *testing.T) {
	side := func(k string, v []byte) []byte { return append(msgp.AppendString(nil, k), v...) }
	req := func(a, b []byte) []byte {
		return append(append(msgp.AppendMapHeader(nil, 2), side("a", a)...), side("b", b)...)
	}
	rec := msgp.AppendArrayHeader(nil, 0) // a recorded message list: []
	plain := string(core.AppendCompareBytes(nil, req(rec, rec), testFromJSON))
	if got := string(core.AppendCompareBytes(nil, req(msgp.AppendBytes(nil, rec), msgp.AppendBytes(nil, rec)), testFromJSON)); got != plain {
		t.Fatalf("bin sides: %s, want %s", got, plain)
	}
	jsonText := msgp.AppendString(nil, "[]") // JSON text in a str, in a bin: the same as the str itself
	if got := string(core.AppendCompareBytes(nil, req(msgp.AppendBytes(nil, jsonText), rec), testFromJSON)); got != plain {
		t.Fatalf("JSON text in a bin: %s, want %s", got, plain)
	}
	// The bytes of JSON text (no msgpack map, array or str: the CLI's rule
	// for a file) are that text.
	if got := string(core.AppendCompareBytes(nil, req(msgp.AppendBytes(nil, []byte(" \r\n[]")), rec), testFromJSON)); got != plain {
		t.Fatalf("JSON text bytes in a bin: %s, want %s", got, plain)
	}
	for _, c := range []struct {
		a, b       []byte
		path, want string
	}{
		{msgp.AppendBytes(nil, nil), rec, "a", "this side is empty (0 bytes)"},
		{msgp.AppendString(nil, ""), rec, "a", "this side is empty (0 bytes)"},
		{rec, msgp.AppendString(nil, " \r\n\t"), "b", "this side is empty (only white space)"},
		{rec, msgp.AppendBytes(nil, nil), "b", "this side is empty (0 bytes)"},
		{rec, msgp.AppendBytes(nil, []byte("  \n")), "b", "this side is empty (only white space)"}, // bytes of JSON text, as the CLI reads a file
		{rec, msgp.AppendBytes(nil, append(rec, rec...)), "b", "go on past its msgpack value (which ends at byte 1 of 2)"},
		{msgp.AppendBytes(nil, []byte{0x92, 0x90}), rec, "a", "ends in the middle of a value"},
		{rec, msgp.AppendBytes(nil, []byte{0x90, '{', '}'}), "b", "which ends at byte 1 of 3); give one request or message list per side"},
		{rec, msgp.AppendBytes(nil, []byte("\ufeff[]")), "b", "looking for beginning of value"}, // JSON text bytes, judged by the JSON reader (the test's)
	} {
		ans := string(core.AppendCompareBytes(nil, req(c.a, c.b), testFromJSON))
		if !strings.Contains(ans, `"code":"malformed_request"`) || !strings.Contains(ans, `"path":"`+c.path+`"`) || !strings.Contains(ans, c.want) {
			t.Errorf("%x vs %x: %s, want %q at %s", c.a, c.b, ans, c.want, c.path)
		}
	}
}
