package wasmhost

import (
	"bytes"
	"encoding/json"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// The agent loop's side of prompt caching, run inside the module: a
// Prompt's provider body (docs/SPEC.md §7.13, §7.14) and each call's cache
// verdict as it happens (§7.15).

// Export returns the provider's request body for the prompt as it is now,
// as Runner.Export answers it for the request with the steps so far, byte
// for byte, without assembling the history again: the module is sent the
// prompt form (its messages and segment ends). opts nil is the defaults.
// A refusal is a *core.Error (its path a request path:
// request.steps[3].raw_output).
func (p *Prompt) Export(provider string, opts *core.ExportOptions) (json.RawMessage, error) {
	n := len(p.resp.Messages)
	p.packed = core.AppendMessages(p.packed, p.resp.Messages[p.packedN:n]) // only those added since the last export
	p.packedN = n
	return p.r.Export(core.AppendPromptFormOf(nil, p.seg, n, p.packed, p.resp.Injected), provider, opts)
}

// Form is the prompt's prompt form as it is now (docs/SPEC.md §7.14),
// msgpack: what Runner.Export, Runner.CacheReport, Runner.Compare and a
// CacheRun take for the Prompt wherever they take a request (a snapshot:
// later steps never show in it).
func (p *Prompt) Form() []byte { return p.form(len(p.resp.Messages)) }

// form is the prompt form of the prompt's first n messages (§7.14).
func (p *Prompt) form(n int) []byte { return core.AppendPromptForm(nil, p.resp, n, p.seg) }

// CacheRun is a run's cache report made call by call inside the module,
// as core.CacheRun makes it natively: Call and CallPrompt answer each
// call's entry of the cache report as the loop makes it, Report the whole
// run's, equal to cache_report over the same prompts and usage. A Prompt
// that only grew since the last call costs what it added. Not safe for
// concurrent use.
type CacheRun struct {
	r       *Runner
	state   []byte            // the run's state, JSON, as the last call answered it
	entries []json.RawMessage // each call's entry, JSON
	// the last valid call's prompt: a Prompt and its message count then, or
	// a request's msgpack
	lastPrompt *Prompt
	lastLen    int
	lastReq    []byte
}

// NewCacheRun starts a run.
func (r *Runner) NewCacheRun() *CacheRun { return &CacheRun{r: r} }

// Call reports on the run's next call: request its wire request (msgpack,
// or JSON text), usage the provider's usage or whole response as JSON text
// (nil: none recorded, class no_usage). It returns the call's entry as
// JSON (an invalid request is {"error": …}); a failed call is an error.
func (c *CacheRun) Call(request, usage []byte) (json.RawMessage, error) {
	// In a bin, the core judges the bytes as it judges any host's (msgpack,
	// or JSON text whatever its first byte: a BOM, CR LF); the copy is also
	// what the next call is compared with, whatever the caller does with
	// request.
	return c.call(msgp.AppendBytes(nil, request), c.previous(), usage, nil, 0)
}

// CallPrompt reports on the run's next call, whose prompt is p as it is
// now; usage as Call takes it.
func (c *CacheRun) CallPrompt(p *Prompt, usage []byte) (json.RawMessage, error) {
	n := len(p.resp.Messages)
	if c.lastPrompt == p && n >= c.lastLen {
		ext := msgp.AppendMapHeader(nil, 2)
		ext = msgp.AppendInt64(msgp.AppendString(ext, "extends"), int64(c.lastLen))
		ext = msgp.AppendString(ext, "messages")
		ext = core.AppendMessageArray(ext, p.resp.Messages[c.lastLen:n])
		return c.call(ext, []byte{0xc0}, usage, p, n)
	}
	return c.call(p.form(n), c.previous(), usage, p, n)
}

// previous is the last valid call's prompt (msgpack), nil for none.
func (c *CacheRun) previous() []byte {
	switch {
	case c.lastPrompt != nil:
		return c.lastPrompt.form(c.lastLen)
	case c.lastReq != nil:
		return c.lastReq
	}
	return []byte{0xc0}
}

func (c *CacheRun) call(prompt, previous, usage []byte, p *Prompt, n int) (json.RawMessage, error) {
	run := []byte{0xc0}
	if c.state != nil {
		run = msgp.AppendString(nil, string(c.state))
	}
	u := []byte{0xc0}
	if usage != nil {
		var err error
		if u, err = wirejson.ToMsgpack(nil, usage); err != nil {
			return nil, &core.Error{Code: core.CodeMalformedRequest, Path: "usage", Message: "the usage is not JSON text (" + err.Error() + "): give the provider's response or its usage as the API sent it", Offset: -1}
		}
	}
	args, aerr := core.AppendArgs(nil, abi.CallCacheCall, run, prompt, previous, u)
	if aerr != nil {
		return nil, aerr
	}
	answer, fail := c.r.call(abi.CallCacheCall, nil, args)
	if fail != nil {
		return nil, fail
	}
	if bytes.HasPrefix(answer, []byte(`{"error":`)) {
		return nil, c.r.errorOf(answer)
	}
	var a struct {
		Call json.RawMessage `json:"call"`
		Run  json.RawMessage `json:"run"`
	}
	if err := json.Unmarshal(answer, &a); err != nil || a.Call == nil || a.Run == nil {
		return nil, c.r.notAnAnswer(answer, err)
	}
	c.state, c.entries = a.Run, append(c.entries, a.Call)
	if !bytes.HasPrefix(a.Call, []byte(`{"error":`)) { // a valid call: the one the next is compared with
		c.lastPrompt, c.lastLen, c.lastReq = p, n, nil
		if p == nil {
			c.lastReq = prompt
		}
	}
	return a.Call, nil
}

// Report is the run's report so far as JSON, what cache_report answers for
// the same prompts and usage.
func (c *CacheRun) Report() ([]byte, error) {
	if c.state == nil {
		args := append(msgp.AppendString(msgp.AppendArrayHeader(msgp.AppendString(msgp.AppendMapHeader(nil, 2), "requests"), 0), "usage"), 0xc0)
		return c.r.AppendCall(abi.CallCacheReport, nil, args), nil
	}
	var st struct {
		Groups json.RawMessage `json:"groups"`
		Totals json.RawMessage `json:"totals"`
	}
	if err := json.Unmarshal(c.state, &st); err != nil {
		return nil, err
	}
	out := []byte(`{"calls":[`)
	for i, e := range c.entries {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	out = append(append(append(out, `],"groups":`...), st.Groups...), `,"totals":`...)
	return append(append(out, st.Totals...), '}'), nil
}
