//go:build !wasip1

// (SplitViewAnswer, which these tests read the answers with, is the hosts':
// it is not in the wasip1 build, where host-test runs some of core's tests.)

package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// The view (view.go) against an oracle that knows nothing of the encoder:
// the segment ends and steps from the decoded request's counts and the
// decoded response's injected list, the budget crossing from a running sum
// of the decoded message_chars, and each text range checked against the
// decoded text.

// viewRequest is seedRequest with what it lacks: goal messages, blocks of
// several texts, several channels, and budgets around the prompt's size and
// above 2^53 (exact only as a decimal string).
func viewRequest(r *rand.Rand) *Request {
	req := seedRequest(r)
	text := func() string { return []string{"", "a", "é漢", "😀\n{x}", string(make([]byte, 40))}[r.IntN(5)] }
	msg := func() Message {
		m := Message{Role: []string{"system", "user", "assistant"}[r.IntN(3)]}
		for range 1 + r.IntN(3) {
			m.Content = append(m.Content, Block{Type: "text", Text: text()})
		}
		return m
	}
	for range r.IntN(3) {
		req.RunMessages = append(req.RunMessages, msg())
		req.GoalMessages = append(req.GoalMessages, msg())
	}
	if r.IntN(2) == 0 {
		if req.Injections == nil {
			req.Injections = map[string][]Injection{}
		}
		req.Injections["z"+text()] = []Injection{{EntryID: "a", Content: text()}, {EntryID: "b", Content: text()}}
	}
	switch r.IntN(3) {
	case 0:
		b := int64(1)<<53 + 1
		req.MaxPromptChars = &b
	case 1:
		b := int64(r.IntN(120))
		req.MaxPromptChars = &b
	}
	return req
}

func TestViewAgainstDecodedResponse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	n := 0
	for _, lv := range loadVectors(t) {
		checkView(t, lv.File+"/"+lv.Name, lv.Request)
		n++
	}
	for k := range 2000 {
		checkView(t, "random "+strconv.Itoa(k), EncodeRequest(viewRequest(r)))
		n++
	}
	t.Logf("%d requests", n)
}

func checkView(t *testing.T, name string, reqBytes []byte) {
	t.Helper()
	want := AssembleBytes(reqBytes)
	resp, v := AssembleView(reqBytes)
	if !bytes.Equal(resp, want) {
		t.Fatalf("%s: AssembleView's response differs from AssembleBytes'", name)
	}
	ans := AppendAssembleViewBytes([]byte("prefix"), reqBytes)
	if !bytes.HasPrefix(ans, []byte("prefix")) {
		t.Fatalf("%s: the answer does not append to dst", name)
	}
	ans = ans[len("prefix"):]
	resp2, v2, err := SplitViewAnswer(ans)
	if err != nil || !bytes.Equal(resp2, want) {
		t.Fatalf("%s: the answer does not split into the response: %v", name, err)
	}
	if !reflect.DeepEqual(v, v2) {
		t.Fatalf("%s: the answer's view differs from AssembleView's:\n%+v\n%+v", name, v, v2)
	}
	dr, err := DecodeResponse(want)
	if err != nil {
		var at struct {
			ErrorPath  []any `json:"error_path"`
			SyntaxByte *int  `json:"syntax_byte"`
		}
		if v != nil || json.Unmarshal(ans[4+len(want):], &at) != nil || at.ErrorPath == nil || at.SyntaxByte != nil {
			t.Fatalf("%s: an error response with a view, or without its location: %s", name, ans[4+len(want):])
		}
		if got, want := fmt.Sprint(at.ErrorPath), fmt.Sprint(pathPartsJSON(err.(*Error).Path)); got != want {
			t.Fatalf("%s: error_path %s for the path %q", name, got, err.(*Error).Path)
		}
		return
	}
	var steps struct {
		StepStart []int `json:"step_start"`
	}
	if json.Unmarshal(ans[4+len(want):], &steps) != nil || len(steps.StepStart) != v.Steps+1 || steps.StepStart[v.Steps] != len(dr.Messages) {
		t.Fatalf("%s: step_start %v for %d steps and %d messages", name, steps.StepStart, v.Steps, len(dr.Messages))
	}
	for k, m := range steps.StepStart[:v.Steps] {
		if dr.Messages[m].Role != RoleAssistant || dr.Messages[m+1].Role != RoleUser {
			t.Fatalf("%s: step %d does not start at its raw output (message %d)", name, k, m)
		}
	}
	req, err := DecodeRequest(reqBytes)
	if err != nil {
		t.Fatal(err)
	}
	checkViewShape(t, name, req, dr, v)
	checkViewTexts(t, name, want, dr, v)
	checkViewBudgetJSON(t, name, ans, req.MaxPromptChars)
}

// checkViewShape: segments and steps from the request's counts, the budget
// crossing from running sums.
func checkViewShape(t *testing.T, name string, req *Request, dr *Response, v *View) {
	t.Helper()
	nInj := 0
	for _, es := range req.Injections {
		nInj += len(es)
	}
	nRun, nGoal := len(req.RunMessages), len(req.GoalMessages)
	if v.RunEnd != nRun || v.InjectionsEnd != nRun+nInj || nInj != len(dr.Injected) || v.GoalEnd != nRun+nInj+nGoal ||
		v.Steps != len(req.Steps) || len(dr.Messages) != v.GoalEnd+2*v.Steps {
		t.Fatalf("%s: segments %d %d %d, %d steps; the request has %d run, %d injected, %d goal, %d steps",
			name, v.RunEnd, v.InjectionsEnd, v.GoalEnd, v.Steps, nRun, nInj, nGoal, len(req.Steps))
	}
	over := -1
	var sum int64
	for i, c := range dr.MessageChars {
		sum += c
		if over < 0 && req.MaxPromptChars != nil && sum > *req.MaxPromptChars {
			over = i
		}
	}
	if v.FirstOver != over {
		t.Fatalf("%s: first over %d, the running sum says %d", name, v.FirstOver, over)
	}
	if (v.MaxPromptChars == nil) != (req.MaxPromptChars == nil) || v.MaxPromptChars != nil && *v.MaxPromptChars != *req.MaxPromptChars {
		t.Fatalf("%s: the budget differs from the request's", name)
	}
	if !reflect.DeepEqual(v.MessageChars, dr.MessageChars) || v.PromptChars != dr.PromptChars ||
		v.ContextOverflow != dr.ContextOverflow || !reflect.DeepEqual(v.Injected, dr.Injected) || v.PrefixDigests != dr.PrefixDigests {
		t.Fatalf("%s: the view's response fields differ from the decoded response's", name)
	}
}

// checkViewTexts: every text range holds the decoded text, every role index
// the decoded role.
func checkViewTexts(t *testing.T, name string, resp []byte, dr *Response, v *View) {
	t.Helper()
	if len(v.Role) != len(dr.Messages) || len(v.BlockStart) != len(dr.Messages)+1 {
		t.Fatalf("%s: %d roles, %d block starts for %d messages", name, len(v.Role), len(v.BlockStart), len(dr.Messages))
	}
	b := 0
	for i, m := range dr.Messages {
		if v.Roles[v.Role[i]] != m.Role || v.BlockStart[i] != b {
			t.Fatalf("%s: message %d: role %q, first block %d; want %q, %d", name, i, v.Roles[v.Role[i]], v.BlockStart[i], m.Role, b)
		}
		for _, blk := range m.Content {
			if got := string(resp[v.Texts[2*b]:v.Texts[2*b+1]]); got != blk.Text {
				t.Fatalf("%s: block %d: %q, want %q", name, b, got, blk.Text)
			}
			b++
		}
	}
	if v.BlockStart[len(dr.Messages)] != b || len(v.Texts) != 2*b {
		t.Fatalf("%s: %d blocks, the view says %d (%d offsets)", name, b, v.BlockStart[len(dr.Messages)], len(v.Texts))
	}
}

// checkViewBudgetJSON: the budget is sent as its decimal string, exact.
func checkViewBudgetJSON(t *testing.T, name string, ans []byte, budget *int64) {
	t.Helper()
	n := 4 + (int(ans[0]) | int(ans[1])<<8 | int(ans[2])<<16 | int(ans[3])<<24)
	var w map[string]any
	if err := json.Unmarshal(ans[n:], &w); err != nil {
		t.Fatalf("%s: the view is not JSON: %v", name, err)
	}
	want := any(nil)
	if budget != nil {
		want = strconv.FormatInt(*budget, 10)
	}
	if w["max_prompt_chars"] != want {
		t.Fatalf("%s: max_prompt_chars %#v, want %#v", name, w["max_prompt_chars"], want)
	}
}

// pathPartsJSON is pathParts as encoding/json reads the view's error_path.
func pathPartsJSON(p string) []any {
	out := []any{}
	for _, x := range pathParts(p) {
		if n, ok := x.(int); ok {
			out = append(out, float64(n))
		} else {
			out = append(out, x)
		}
	}
	return out
}

// TestPathParts: paths of the core's syntax split into keys and indexes,
// written out here.
func TestPathParts(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []any
	}{
		{"", nil},
		{"steps[3].observation", []any{"steps", 3, "observation"}},
		{`injections["a.b"][0].content`, []any{"injections", "a.b", 0, "content"}},
		{`["7"]`, []any{"7"}},
		{"run_messages[0].content[12].text", []any{"run_messages", 0, "content", 12, "text"}},
		{`injections["q\"\\\n\u0001é"][2]`, []any{"injections", "q\"\\\n\x01é", 2}},
		{"max_prompt_chars", []any{"max_prompt_chars"}},
	} {
		if got := pathParts(tc.path); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("pathParts(%q) = %#v, want %#v", tc.path, got, tc.want)
		}
	}
}
