package core_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
)

// The provider rules of docs/SPEC.md §7.13, checked here apart from
// core/export_rules.go: whitespace is Go's unicode.White_Space table, the
// rules are read from the decoded body or from the assembled messages.

func white(s string) bool { // every code point White_Space ("" too)
	for _, r := range s {
		if !unicode.Is(unicode.White_Space, r) {
			return false
		}
	}
	return true
}

func endsWhite(s string) bool {
	rs := []rune(s)
	return len(rs) > 0 && unicode.Is(unicode.White_Space, rs[len(rs)-1])
}

// bodyBreaks names the rule an exported body breaks, or "".
func bodyBreaks(provider string, body *exportBody) string {
	list := body.Messages
	if provider == "openai-responses" {
		list = body.Input
	}
	switch provider {
	case "openai-chat":
		if len(list) == 0 {
			return "no message"
		}
		return ""
	case "openai-responses":
		return ""
	}
	for i, b := range body.System {
		if b.Text == nil || white(*b.Text) {
			return fmt.Sprintf("system[%d] is empty or blank", i)
		}
	}
	if len(list) == 0 {
		return "no message"
	}
	for i, m := range list {
		final := i == len(list)-1 && m.Role == "assistant"
		if len(m.Content) == 0 && !final {
			return fmt.Sprintf("messages[%d] has no block", i)
		}
		for j, b := range m.Content {
			if b.Text == nil || white(*b.Text) {
				return fmt.Sprintf("messages[%d].content[%d] is empty or blank", i, j)
			}
		}
		if final && len(m.Content) > 0 && endsWhite(*m.Content[len(m.Content)-1].Text) {
			return fmt.Sprintf("the final assistant messages[%d] ends in white space", i)
		}
	}
	return ""
}

// firstRefusal is the path of the first text (in prompt order) of a valid
// request's prompt that breaks a rule of the provider, "request" for the
// prompt as a whole, or "" when the prompt breaks none. sys is the count
// of leading system messages.
func firstRefusal(provider string, req *core.Request, resp *core.Response) string {
	msgs := resp.Messages
	switch provider {
	case "openai-chat":
		if len(msgs) == 0 {
			return "request"
		}
		return ""
	case "openai-responses":
		return ""
	}
	sys := 0
	for sys < len(msgs) && msgs[sys].Role == "system" {
		sys++
	}
	for m, msg := range msgs {
		for j, b := range msg.Content {
			if white(b.Text) {
				return pathOfText(req, resp, m, j)
			}
		}
		if m < sys {
			continue
		}
		final := m == len(msgs)-1 && msg.Role == "assistant"
		if len(msg.Content) == 0 && !final {
			return pathOfText(req, resp, m, -1)
		}
		if final && len(msg.Content) > 0 && endsWhite(msg.Content[len(msg.Content)-1].Text) {
			return pathOfText(req, resp, m, len(msg.Content)-1)
		}
	}
	if len(msgs) == sys {
		return "request"
	}
	return ""
}

// pathOfText is the request path of block j (-1: the content list) of
// message m, from the request's own segments.
func pathOfText(req *core.Request, resp *core.Response, m, j int) string {
	content := ".content"
	if j >= 0 {
		content += "[" + strconv.Itoa(j) + "].text"
	}
	run := len(req.RunMessages)
	if m < run {
		return fmt.Sprintf("request.run_messages[%d]%s", m, content)
	}
	for i, in := range resp.Injected {
		if in.MessageIndex == m {
			k := 0
			for _, p := range resp.Injected[:i] {
				if p.Channel == in.Channel {
					k++
				}
			}
			return fmt.Sprintf("request.injections[%s][%d].content", pyQuote(in.Channel), k)
		}
	}
	goal := run + len(resp.Injected)
	if m < goal+len(req.GoalMessages) {
		return fmt.Sprintf("request.goal_messages[%d]%s", m-goal, content)
	}
	s := m - goal - len(req.GoalMessages)
	if s%2 == 0 {
		return fmt.Sprintf("request.steps[%d].raw_output", s/2)
	}
	return fmt.Sprintf("request.steps[%d].observation", s/2)
}

// heldText is the text a refusal's path names, read from the request (an
// observation: its rendering, the message after its step's raw_output),
// and whether the path names a content list; ok false when the path holds
// no text.
func heldText(req *core.Request, resp *core.Response, path string) (text string, list bool, ok bool) {
	var i, j, s int
	var ch string
	switch {
	case scan(path, "request.run_messages[%d].content[%d].text", &i, &j) && i < len(req.RunMessages) && j < len(req.RunMessages[i].Content):
		return req.RunMessages[i].Content[j].Text, false, true
	case scan(path, "request.goal_messages[%d].content[%d].text", &i, &j) && i < len(req.GoalMessages) && j < len(req.GoalMessages[i].Content):
		return req.GoalMessages[i].Content[j].Text, false, true
	case scan(path, "request.run_messages[%d].content", &i) && i < len(req.RunMessages):
		return "", true, len(req.RunMessages[i].Content) == 0
	case scan(path, "request.goal_messages[%d].content", &i) && i < len(req.GoalMessages):
		return "", true, len(req.GoalMessages[i].Content) == 0
	case scan(path, "request.steps[%d].raw_output", &s) && s < len(req.Steps):
		return req.Steps[s].RawOutput, false, true
	case scan(path, "request.steps[%d].observation", &s) && s < len(req.Steps):
		m := len(resp.Messages) - 2*len(req.Steps) + 2*s + 1
		return resp.Messages[m].Content[0].Text, false, true
	case strings.HasPrefix(path, "request.injections[") && strings.HasSuffix(path, "].content"):
		inner := strings.TrimSuffix(strings.TrimPrefix(path, "request.injections["), "].content")
		k := strings.LastIndex(inner, "][")
		if k < 0 || json.Unmarshal([]byte(inner[:k]), &ch) != nil {
			return "", false, false
		}
		n, err := strconv.Atoi(inner[k+2:])
		if entries := req.Injections[ch]; err == nil && n < len(entries) {
			return entries[n].Content, false, true
		}
	}
	return "", false, false
}

// pyQuote quotes a channel name as docs/SPEC.md §2.2 does (Python's
// json.dumps(s, ensure_ascii=False)); the test's names are short.
func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// scan reports whether path is exactly format filled with ints.
func scan(path, format string, args ...*int) bool {
	ptrs := make([]any, len(args))
	for i := range args {
		ptrs[i] = args[i]
	}
	if n, err := fmt.Sscanf(path, format, ptrs...); err != nil || n != len(args) {
		return false
	}
	vals := make([]any, len(args))
	for i := range args {
		vals[i] = *args[i]
	}
	return fmt.Sprintf(format, vals...) == path
}

// blankish are texts for the rules: empty, White_Space only, ending in it,
// and code points that are not White_Space (U+200B, U+FEFF, U+001C,
// U+180E).
var blankish = []string{
	"", " ", "\t\n\v\f\r", "\u0085", "\u00a0", "\u1680", "\u2000\u200a", "\u2028\u2029", "\u202f\u205f\u3000",
	"x ", "x\u00a0", "\u3000x", "\u200b", "\ufeff", "\x1c\x1d\x1e\x1f", "\u180e", " \u200b ",
}

// blankTemplates render blank for some observations.
var blankTemplates = []string{
	"{observation}", " {observation:.2}", "{observation:\u3000^3.0}", "{observation!r: <4.0}\n",
	"{observation:>8}", "\n{observation}\t", "{observation:.1}{observation!a:.0}",
}

// rulesRequest is a random valid-looking request whose texts are often
// empty or blank, whose messages sometimes have no block, and whose goal
// sometimes ends in an assistant message.
func rulesRequest(r *rand.Rand) *core.Request {
	req := randreq.Request(r)
	pick := func(s *string) {
		if r.IntN(6) == 0 {
			*s = blankish[r.IntN(len(blankish))]
		} else if *s == "" || r.IntN(3) == 0 {
			*s = "t" + strconv.Itoa(r.IntN(100))
		}
	}
	msgs := func(list []core.Message) {
		for i := range list {
			for j := range list[i].Content {
				pick(&list[i].Content[j].Text)
			}
			if r.IntN(20) == 0 {
				list[i].Content = nil
			}
		}
	}
	msgs(req.RunMessages)
	msgs(req.GoalMessages)
	for _, entries := range req.Injections {
		for i := range entries {
			pick(&entries[i].Content)
		}
	}
	for i := range req.Steps {
		pick(&req.Steps[i].RawOutput)
		pick(&req.Steps[i].Observation)
	}
	switch r.IntN(8) {
	case 0:
		req.Steps = nil
		req.GoalMessages = append(req.GoalMessages, core.Message{Role: "assistant", Content: []core.Block{{Type: "text", Text: blankish[r.IntN(len(blankish))] + "a" + blankish[r.IntN(len(blankish))]}}})
	case 1:
		req.ObservationTemplate = blankTemplates[r.IntN(len(blankTemplates))]
	case 2:
		req.RunMessages, req.GoalMessages, req.Steps = req.RunMessages[:min(len(req.RunMessages), 1)], nil, nil
		req.Injections = nil
	}
	return req
}

// TestExportProviderRules: over 2,500 random requests and every provider,
// no exported body breaks a rule (read from the decoded body), and a
// refusal is malformed_request at the path of the first text that breaks
// one, a path that holds that text in the request.
func TestExportProviderRules(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 4))
	counts := map[string]int{}
	for n := range 2500 {
		req := rulesRequest(r)
		resp, err := core.Assemble(req)
		if err != nil {
			continue
		}
		wire := core.EncodeRequest(req)
		for _, provider := range []string{"anthropic", "openai-chat", "openai-responses"} {
			ans := exportOf(t, wire, provider, nil)
			var body exportBody
			if err := json.Unmarshal(ans, &body); err != nil {
				t.Fatalf("%d %s: %v", n, provider, err)
			}
			want := firstRefusal(provider, req, resp)
			if body.Error == nil {
				if broken := bodyBreaks(provider, &body); broken != "" || want != "" {
					t.Fatalf("%d %s: exported a body that breaks a rule (%s; the first offender %q): %.400s", n, provider, broken, want, ans)
				}
				counts[provider+" ok"]++
				continue
			}
			e := body.Error
			if e.Code == "malformed_request" && strings.Contains(e.Message, "system text only before") {
				continue // a system message after another role (Anthropic)
			}
			if e.Code != "malformed_request" || e.Path != want {
				t.Fatalf("%d %s: %+v, want malformed_request at %q", n, provider, *e, want)
			}
			counts[provider+" refused"]++
			if e.Path == "request" {
				continue
			}
			text, list, ok := heldText(req, resp, e.Path)
			switch {
			case !ok:
				t.Fatalf("%d %s: the path %s holds no text of the request", n, provider, e.Path)
			case list && !strings.Contains(e.Message, "no content block"),
				!list && !white(text) && !endsWhite(text):
				t.Fatalf("%d %s: %s holds %q, which breaks no rule: %s", n, provider, e.Path, text, e.Message)
			}
		}
	}
	for _, k := range []string{"anthropic ok", "anthropic refused", "openai-chat ok", "openai-chat refused", "openai-responses ok"} {
		if counts[k] < 30 {
			t.Errorf("only %d cases of %s: %v", counts[k], k, counts)
		}
	}
	t.Log(counts)
}
