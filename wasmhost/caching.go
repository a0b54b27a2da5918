package wasmhost

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// The typed facades of the caching calls (docs/SPEC.md §7.12, §7.13): the
// arguments packed by core.AppendArgs, the answer decoded into Go values,
// its error a *core.Error. The core judges every argument.

// Export is the provider's request body for request's prompt (docs/SPEC.md
// §7.13): request is a request's msgpack or JSON text (core.EncodeRequest of
// a typed one), provider one of core.ProviderAnthropic, ProviderOpenAIChat
// and ProviderOpenAIResponses, opts nil for the defaults (a non-nil opts is
// sent whole: start from core.DefaultExportOptions()). The body is its JSON
// text, byte for byte what every host and `polyloop-assemble export` write:
// it goes to the provider's HTTP API as it is, keeps the body fields' order
// (a map would not), and decodes into core.AnthropicBody,
// core.OpenAIChatBody or core.OpenAIResponsesBody, or a provider SDK's
// types. The error is a *core.Error.
func (r *Runner) Export(request []byte, provider string, opts *core.ExportOptions) (json.RawMessage, error) {
	args, err := core.AppendArgs(nil, abi.CallExport, msgp.AppendBytes(nil, request), msgp.AppendString(nil, provider), opts.AppendMsgpack(nil))
	if err != nil {
		return nil, err
	}
	ans, fail := r.call(abi.CallExport, nil, args)
	if fail != nil {
		return nil, fail
	}
	text, rest, jerr := wirejson.FromMsgpack(nil, ans)
	if jerr != nil || len(rest) != 0 {
		return nil, r.notAnAnswer(ans, jerr)
	}
	if core.IsMapError(ans) {
		return nil, r.errorOf(text)
	}
	return text, nil
}

// CacheReport reports on the calls of a run, in order (docs/SPEC.md
// §7.12): each request a request's msgpack or JSON text; usage nil, or one
// recorded provider usage per request (nil where none): any value that
// encoding/json writes as the provider's usage object or a whole response
// holding one (an SDK's usage struct, a map[string]any, json.RawMessage).
// An invalid request is its call's Err, never the report's error; the
// error is a *core.Error (a usage that is no JSON, a count that differs).
func (r *Runner) CacheReport(requests [][]byte, usage []any) (*core.CacheReport, error) {
	reqs := msgp.AppendArrayHeader(nil, uint32(len(requests)))
	for _, q := range requests {
		reqs = msgp.AppendBytes(reqs, q)
	}
	us := msgp.AppendNil(nil)
	if usage != nil {
		us = msgp.AppendArrayHeader(nil, uint32(len(usage)))
		for _, u := range usage {
			us = appendUsage(us, u)
		}
	}
	args, err := core.AppendArgs(nil, abi.CallCacheReport, reqs, us)
	if err != nil {
		return nil, err
	}
	ans, fail := r.call(abi.CallCacheReport, nil, args)
	if fail != nil {
		return nil, fail
	}
	if bytes.HasPrefix(ans, []byte(`{"error":`)) {
		return nil, r.errorOf(ans)
	}
	var rep reportJSON
	if err := json.Unmarshal(ans, &rep); err != nil {
		return nil, r.notAnAnswer(ans, err)
	}
	return rep.report(), nil
}

// appendUsage appends one usage as msgpack: its JSON (encoding/json) read
// by wirejson, nil as nil; one that neither writes or reads is an
// unreadable value (core.ExtUnreadable), which the core answers as that
// call's invalid_usage (docs/SPEC.md §7.6): this host writes no message.
func appendUsage(dst []byte, u any) []byte {
	if u == nil {
		return msgp.AppendNil(dst)
	}
	text, err := json.Marshal(u)
	if err == nil {
		var out []byte
		if out, err = wirejson.ToMsgpack(dst, text); err == nil {
			return out
		}
	}
	data := msgp.AppendArrayHeader(nil, 3)
	for _, s := range []string{fmt.Sprintf("%T", u), fmt.Sprintf("%T", err), err.Error()} {
		data = msgp.AppendString(data, s)
	}
	out, _ := msgp.AppendExtension(dst, &msgp.RawExtension{Type: core.ExtUnreadable, Data: data}) // a RawExtension always writes
	return out
}

// errorJSON is the {code, message, path, offset} of an error answer.
type errorJSON struct {
	Code    core.Code `json:"code"`
	Message string    `json:"message"`
	Path    string    `json:"path"`
	Offset  *int      `json:"offset"`
}

func (e *errorJSON) err() *core.Error {
	if e == nil {
		return nil
	}
	out := &core.Error{Code: e.Code, Path: e.Path, Message: e.Message, Offset: -1}
	if e.Offset != nil {
		out.Offset = *e.Offset
	}
	return out
}

// errorOf is the *core.Error of a JSON error answer {"error": …}.
func (r *Runner) errorOf(text []byte) *core.Error {
	var a struct {
		Error *errorJSON `json:"error"`
	}
	if err := json.Unmarshal(text, &a); err != nil || a.Error == nil || a.Error.Code == "" {
		return r.notAnAnswer(text, err)
	}
	return a.Error.err()
}

// notAnAnswer is the internal error of an answer that does not decode.
func (r *Runner) notAnAnswer(ans []byte, err error) *core.Error {
	return &core.Error{Code: core.CodeInternal, Message: abi.MsgBadResponse, Detail: fmt.Sprintf("%s: %v; %s", r.Engine(), err, describe(ans)), Offset: -1}
}

// reportJSON is the cache report's JSON (docs/SPEC.md §7.12).
type reportJSON struct {
	Calls []struct {
		Error    *errorJSON `json:"error"`
		Previous *int       `json:"previous"`
		Extends  bool       `json:"extends"`
		Break    *struct {
			Segment  string  `json:"segment"`
			Message  int     `json:"message"`
			Char     int     `json:"char"`
			Step     *int    `json:"step"`
			Cause    string  `json:"cause"`
			Before   string  `json:"excerpt_before"`
			Previous *string `json:"excerpt_previous"`
			This     *string `json:"excerpt_this"`
		} `json:"break"`
		PromptChars          int64              `json:"prompt_chars"`
		CacheablePrefixChars int64              `json:"cacheable_prefix_chars"`
		Digests              core.PrefixDigests `json:"prefix_digests"`
		Usage                *struct {
			CachedTokens        *int64     `json:"cached_tokens"`
			WrittenTokens       *int64     `json:"written_tokens"`
			Class               string     `json:"class"`
			MissReason          string     `json:"miss_reason"`
			MissReasonDisagrees bool       `json:"miss_reason_disagrees"`
			Note                string     `json:"note"`
			Error               *errorJSON `json:"error"`
		} `json:"usage"`
	} `json:"calls"`
	Groups []struct {
		Digests     core.PrefixDigests `json:"prefix_digests"`
		Calls       int                `json:"calls"`
		PrefixChars int64              `json:"prefix_chars"`
	} `json:"groups"`
}

// report is the report as core.CacheReportOf gives it (the totals are its
// Totals, the shares and new chars its fields' quotients and differences).
func (j *reportJSON) report() *core.CacheReport {
	r := &core.CacheReport{Calls: make([]core.CacheCall, len(j.Calls)), Groups: make([]core.CacheGroup, len(j.Groups))}
	for i, c := range j.Calls {
		out := &r.Calls[i]
		out.Err, out.Previous, out.Extends = c.Error.err(), -1, c.Extends
		if c.Previous != nil {
			out.Previous = *c.Previous
		}
		out.PromptChars, out.CacheablePrefixChars, out.Digests = c.PromptChars, c.CacheablePrefixChars, c.Digests
		if b := c.Break; b != nil {
			out.Break = &core.CacheBreak{Segment: b.Segment, Message: b.Message, Char: b.Char, Step: -1, Cause: b.Cause, Before: b.Before}
			if b.Step != nil {
				out.Break.Step = *b.Step
			}
			if b.Previous != nil {
				out.Break.Previous, out.Break.HasPrevious = *b.Previous, true
			}
			if b.This != nil {
				out.Break.This, out.Break.HasThis = *b.This, true
			}
		}
		if u := c.Usage; u != nil {
			out.Usage = &core.CacheUsage{Class: u.Class, Err: u.Error.err(), WrittenTokens: u.WrittenTokens,
				MissReason: u.MissReason, MissReasonDisagrees: u.MissReasonDisagrees, Note: u.Note}
			if u.CachedTokens != nil {
				out.Usage.CachedTokens = *u.CachedTokens
			}
		}
	}
	for i, g := range j.Groups {
		r.Groups[i] = core.CacheGroup{Digests: g.Digests, Calls: g.Calls, PrefixChars: g.PrefixChars}
	}
	return r
}
