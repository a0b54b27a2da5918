package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/wirejson"
)

// promptForm is the prompt form of p (docs/SPEC.md §7.14), written from
// its response by hand: messages, segments and injected.
func promptForm(p *core.Prompt) []byte {
	r := p.Response()
	var b []byte
	b = msgp.AppendMapHeader(b, 3)
	s := p.Segments()
	b = msgp.AppendMapHeader(msgp.AppendString(b, "segments"), 3)
	b = msgp.AppendInt(msgp.AppendString(b, "run_end"), s.RunEnd)
	b = msgp.AppendInt(msgp.AppendString(b, "injections_end"), s.InjectionsEnd)
	b = msgp.AppendInt(msgp.AppendString(b, "goal_end"), s.GoalEnd)
	b = msgp.AppendString(b, "messages")
	b = msgp.AppendArrayHeader(b, uint32(len(r.Messages)))
	for _, m := range r.Messages {
		b = msgp.AppendMapHeader(b, 2)
		b = msgp.AppendString(msgp.AppendString(b, "role"), m.Role)
		b = msgp.AppendArrayHeader(msgp.AppendString(b, "content"), uint32(len(m.Content)))
		for _, blk := range m.Content {
			b = msgp.AppendMapHeader(b, 2)
			b = msgp.AppendString(msgp.AppendString(b, "type"), blk.Type)
			b = msgp.AppendString(msgp.AppendString(b, "text"), blk.Text)
		}
	}
	b = msgp.AppendArrayHeader(msgp.AppendString(b, "injected"), uint32(len(r.Injected)))
	for _, e := range r.Injected {
		b = msgp.AppendMapHeader(b, 3)
		b = msgp.AppendString(msgp.AppendString(b, "channel"), e.Channel)
		b = msgp.AppendString(msgp.AppendString(b, "entry_id"), e.EntryID)
		b = msgp.AppendInt(msgp.AppendString(b, "message_index"), e.MessageIndex)
	}
	return b
}

// exportArgs is an export call's request of side (msgpack) for provider.
func exportArgs(side []byte, provider string, lookback int) []byte {
	b := msgp.AppendMapHeader(nil, 3)
	b = append(msgp.AppendString(b, "request"), side...)
	b = msgp.AppendString(msgp.AppendString(b, "provider"), provider)
	b = msgp.AppendMapHeader(msgp.AppendString(b, "options"), 1)
	return msgp.AppendInt(msgp.AppendString(b, "lookback"), lookback)
}

// TestPromptExportEqualsExport: a Prompt's export (Prompt.AppendExport, and
// the export call given its prompt form) is the export of the request with
// the steps so far, byte for byte, error for error, for every provider.
func TestPromptExportEqualsExport(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 7))
	seen := map[string]int{}
	for range 1500 {
		full := randreq.Request(r)
		k := r.IntN(len(full.Steps) + 1)
		head := *full
		head.Steps = full.Steps[:k]
		p, err := core.NewPrompt(&head)
		if err != nil {
			continue
		}
		for _, s := range full.Steps[k:] {
			if p.AddStep(s.RawOutput, s.Observation) != nil {
				return
			}
		}
		if form := core.AppendPromptForm(nil, p.Response(), len(p.Response().Messages), p.Segments()); !bytes.Equal(form, promptForm(p)) {
			t.Fatalf("AppendPromptForm\n%q\nby hand\n%q", form, promptForm(p))
		}
		for _, provider := range core.Providers {
			lookback := r.IntN(4)
			want := wirejson.AppendExport(nil, exportArgs(core.EncodeRequest(full), provider, lookback))
			opts := core.DefaultExportOptions()
			opts.Lookback = lookback
			got, gerr := p.AppendExport(nil, provider, &opts)
			if gerr != nil {
				got = core.AppendMapError(nil, gerr)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: Prompt.AppendExport\n%q\nexport of the request\n%q", provider, got, want)
			}
			viaForm := wirejson.AppendExport(nil, exportArgs(promptForm(p), provider, lookback))
			if !bytes.Equal(viaForm, want) {
				t.Fatalf("%s: export of the prompt form\n%q\nexport of the request\n%q", provider, viaForm, want)
			}
			seen[fmt.Sprint(gerr == nil)]++
		}
	}
	if seen["true"] < 1000 || seen["false"] < 20 {
		t.Fatalf("too few cases of each outcome: %v", seen)
	}
}

// runCall is one call of a random run: its request, its Prompt (when the
// loop holds one) and its usage (msgpack, nil for none).
type runCall struct {
	req    []byte
	prompt *core.Prompt
	usage  []byte
	plen   int    // the Prompt's messages at the call
	form   []byte // its prompt form at the call
	entry  []byte // CacheRun.CallPrompt's entry, made at the call
	ext    []byte // its messages past the previous call's plen, a msgpack array (when it extends)
}

// randomRun is a loop of calls on one Prompt that sometimes is replaced (a
// condensed history, an edited injection or goal), with a bad request now
// and then and random usage.
func randomRun(r *rand.Rand, at func(c *runCall)) []runCall {
	base := randreq.Request(r)
	base.Steps = nil
	p, err := core.NewPrompt(base)
	if err != nil {
		return nil
	}
	cur := *base
	var run []runCall
	for i := range 2 + r.IntN(12) {
		switch r.IntN(8) {
		case 0: // a new Prompt: the goal edited, or the history condensed
			next := cur
			if r.IntN(2) == 0 {
				next.GoalMessages = append([]core.Message{{Role: "user", Content: []core.Block{{Type: "text", Text: fmt.Sprint("goal ", i)}}}}, cur.GoalMessages...)
			} else if len(cur.Steps) > 0 {
				next.Steps = append([]core.Step{{RawOutput: "summary", Observation: "condensed"}}, cur.Steps[len(cur.Steps)/2:]...)
			}
			if np, err := core.NewPrompt(&next); err == nil {
				p, cur = np, next
			}
		case 1: // a request that is not valid
			c := runCall{req: []byte{0x81, 0xa1, 'x', 0x01}, usage: msgp.AppendNil(nil)}
			at(&c)
			run = append(run, c)
			continue
		}
		for range r.IntN(3) {
			s := core.Step{RawOutput: randreq.Text(r, 20), Observation: randreq.Text(r, 20)}
			if p.AddStep(s.RawOutput, s.Observation) == nil {
				cur.Steps = append(cur.Steps, s)
			}
		}
		c := runCall{req: core.EncodeRequest(&cur), prompt: p}
		switch r.IntN(9) {
		case 6: // Bedrock's camelCase: read or written, either, both or neither
			c.usage = msgp.AppendMapHeader(nil, 2)
			c.usage = msgp.AppendInt(msgp.AppendString(c.usage, "cacheReadInputTokens"), r.IntN(2)*50)
			c.usage = msgp.AppendInt(msgp.AppendString(c.usage, "cacheWriteInputTokens"), r.IntN(2)*70)
		case 7: // a usage the report does not know
			c.usage = msgp.AppendMapHeader(nil, 1)
			c.usage = msgp.AppendInt(msgp.AppendString(c.usage, "promptTokens"), 5)
		case 8: // a whole Anthropic response with the provider's miss reason
			c.usage = msgp.AppendMapHeader(nil, 2)
			c.usage = msgp.AppendMapHeader(msgp.AppendString(c.usage, "usage"), 1)
			c.usage = msgp.AppendInt(msgp.AppendString(c.usage, "cache_creation_input_tokens"), r.IntN(2)*30)
			c.usage = msgp.AppendMapHeader(msgp.AppendString(c.usage, "diagnostics"), 1)
			c.usage = msgp.AppendMapHeader(msgp.AppendString(c.usage, "cache_miss_reason"), 1)
			c.usage = msgp.AppendString(msgp.AppendString(c.usage, "type"), []string{"tools_changed", "messages_changed"}[r.IntN(2)])
		case 5: // JSON text: a host parses it; given to the core, a str is no usage
			c.usage = msgp.AppendString(nil, `{"cache_read_input_tokens": 9}`)
		case 0, 1:
			c.usage = msgp.AppendNil(nil)
		case 2:
			c.usage = msgp.AppendMapHeader(nil, 1)
			c.usage = msgp.AppendInt(msgp.AppendString(c.usage, "cache_read_input_tokens"), r.IntN(3)*100)
		case 3:
			c.usage = msgp.AppendMapHeader(nil, 1)
			c.usage = msgp.AppendString(msgp.AppendString(c.usage, "cache_read_input_tokens"), "many")
		case 4:
			c.usage = msgp.AppendMapHeader(nil, 1)
			c.usage = msgp.AppendMapHeader(msgp.AppendString(c.usage, "prompt_tokens_details"), 1)
			c.usage = msgp.AppendInt(msgp.AppendString(c.usage, "cached_tokens"), r.IntN(2)*64)
		}
		c.plen, c.form = len(p.Response().Messages), promptForm(p)
		at(&c)
		run = append(run, c)
	}
	return run
}

// reportArgs is a cache_report request of the run's requests and usage.
func reportArgs(run []runCall) []byte {
	b := msgp.AppendMapHeader(nil, 2)
	b = msgp.AppendArrayHeader(msgp.AppendString(b, "requests"), uint32(len(run)))
	for _, c := range run {
		b = append(b, c.req...)
	}
	b = msgp.AppendArrayHeader(msgp.AppendString(b, "usage"), uint32(len(run)))
	for _, c := range run {
		if c.usage == nil {
			b = msgp.AppendNil(b)
		} else {
			b = append(b, c.usage...)
		}
	}
	return b
}

type rawReport struct {
	Calls  []json.RawMessage `json:"calls"`
	Groups json.RawMessage   `json:"groups"`
	Totals json.RawMessage   `json:"totals"`
}

// TestCacheRunEqualsReport: the verdict of each call as it happens equals
// its entry of cache_report over the whole run, and so do the groups and
// totals, on every way in: CacheRun.Call (requests), CacheRun.CallPrompt
// (the Prompt as it grows: O(new) while it only grows) and the module's
// cache_call (its state threaded through JSON, the prompt as an extension
// while it only grows, else with the previous prompt).
func TestCacheRunEqualsReport(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 11))
	classes := map[string]int{}
	for range 400 {
		byPrompt := core.NewCacheRun()
		var lastP *core.Prompt
		lastLen := 0
		run := randomRun(r, func(c *runCall) {
			if c.prompt == nil {
				c.entry = byPrompt.Call(c.req, c.usage).AppendJSON(nil)
				return
			}
			if lastP == c.prompt && c.plen >= lastLen {
				msgs := c.prompt.Response().Messages[lastLen:c.plen]
				ext := msgp.AppendArrayHeader(nil, uint32(len(msgs)))
				for _, m := range msgs {
					ext = msgp.AppendMapHeader(ext, 2)
					ext = msgp.AppendString(msgp.AppendString(ext, "role"), m.Role)
					ext = msgp.AppendArrayHeader(msgp.AppendString(ext, "content"), 1)
					ext = msgp.AppendMapHeader(ext, 2)
					ext = msgp.AppendString(msgp.AppendString(ext, "type"), "text")
					ext = msgp.AppendString(msgp.AppendString(ext, "text"), m.Content[0].Text)
				}
				c.ext = ext
			}
			c.entry = byPrompt.CallPrompt(c.prompt, c.usage).AppendJSON(nil)
			lastP, lastLen = c.prompt, c.plen
		})
		if run == nil {
			continue
		}
		var want rawReport
		whole := wirejson.AppendCacheReport(nil, reportArgs(run))
		if err := json.Unmarshal(whole, &want); err != nil {
			t.Fatalf("%v: %s", err, whole)
		}
		byReq := core.NewCacheRun()
		var state []byte // the module's run state, JSON
		var last *runCall
		for i := range run {
			c := &run[i]
			usage := c.usage
			got := byReq.Call(c.req, usage).AppendJSON(nil)
			if !bytes.Equal(got, want.Calls[i]) {
				t.Fatalf("call %d: CacheRun.Call\n%s\ncache_report\n%s", i, got, want.Calls[i])
			}
			if got = c.entry; !bytes.Equal(got, want.Calls[i]) {
				t.Fatalf("call %d: CacheRun.CallPrompt\n%s\ncache_report\n%s", i, got, want.Calls[i])
			}
			// The module's call.
			args := msgp.AppendMapHeader(nil, 4)
			args = msgp.AppendString(args, "run")
			if state == nil {
				args = msgp.AppendNil(args)
			} else {
				args = msgp.AppendString(args, string(state))
			}
			args = msgp.AppendString(args, "prompt")
			extends := last != nil && c.ext != nil && last.prompt == c.prompt
			if extends {
				args = msgp.AppendMapHeader(args, 2)
				args = msgp.AppendInt(msgp.AppendString(args, "extends"), last.plen)
				args = append(msgp.AppendString(args, "messages"), c.ext...)
			} else if c.prompt != nil && r.IntN(2) == 0 {
				args = append(args, c.form...)
			} else {
				args = append(args, c.req...)
			}
			args = msgp.AppendString(args, "previous")
			if last == nil || extends {
				args = msgp.AppendNil(args)
			} else {
				args = append(args, last.req...)
			}
			args = msgp.AppendString(args, "usage")
			args = append(args, c.usage...)
			answer := wirejson.AppendCacheCall(nil, args)
			var a struct {
				Call json.RawMessage `json:"call"`
				Run  json.RawMessage `json:"run"`
			}
			if err := json.Unmarshal(answer, &a); err != nil || a.Call == nil {
				t.Fatalf("call %d: cache_call answered %s (%v)", i, answer, err)
			}
			if !bytes.Equal(a.Call, want.Calls[i]) {
				t.Fatalf("call %d: cache_call\n%s\ncache_report\n%s", i, a.Call, want.Calls[i])
			}
			state = a.Run
			if bytes.HasPrefix(want.Calls[i], []byte(`{"previous"`)) { // a valid call
				last = c
				var u struct {
					Usage *struct{ Class string } `json:"usage"`
				}
				_ = json.Unmarshal(want.Calls[i], &u)
				if u.Usage != nil {
					classes[u.Usage.Class]++
				}
			}
		}
		for _, got := range [][]byte{byReq.Report().AppendJSON(nil), byPrompt.Report().AppendJSON(nil)} {
			if !bytes.Equal(got, whole) {
				t.Fatalf("CacheRun.Report\n%s\ncache_report\n%s", got, whole)
			}
		}
		var st struct {
			Groups json.RawMessage `json:"groups"`
			Totals json.RawMessage `json:"totals"`
		}
		if err := json.Unmarshal(state, &st); err != nil || !bytes.Equal(st.Groups, want.Groups) || !bytes.Equal(st.Totals, want.Totals) {
			t.Fatalf("cache_call's run state %s (%v); cache_report's groups %s totals %s", state, err, want.Groups, want.Totals)
		}
	}
	for _, class := range []string{"first", "hit", "prefix_break", "provider_miss", "write_only", "no_usage", "invalid_usage", "unknown_usage"} {
		if classes[class] < 10 {
			t.Fatalf("too few calls of class %s: %v", class, classes)
		}
	}
}
