package core

import (
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/core/msgp"
)

// The parts of a cache report (docs/SPEC.md §7.12) that its JSON writes
// from the calls, and the provider request bodies of an export (§7.13) as
// Go types: what a Go host decodes an answer into, and what tools/genconsts
// writes into the bindings' types.

// CacheTotals are a cache report's totals.
type CacheTotals struct {
	Calls, Errors, Breaks int // the valid calls, the invalid ones, the valid calls with a break
	// PromptChars, CacheableChars (the sum of the calls' cacheable
	// prefixes) and VolatileChars (PromptChars − CacheableChars: what no
	// cache can serve) count code points.
	PromptChars, CacheableChars, VolatileChars int64
	CacheableShare                             float64 // CacheableChars / PromptChars, four decimals, rounded down
	UsageErrors                                int     // the valid calls whose recorded usage cannot be read (invalid_usage)
}

// Totals are the report's totals, as its JSON has them.
func (r *CacheReport) Totals() CacheTotals {
	var t CacheTotals
	for i := range r.Calls {
		c := &r.Calls[i]
		if c.Err != nil {
			t.Errors++
			continue
		}
		t.Calls++
		t.PromptChars += c.PromptChars
		t.CacheableChars += c.CacheablePrefixChars
		if c.Break != nil {
			t.Breaks++
		}
		if c.Usage != nil && c.Usage.Class == UsageInvalid {
			t.UsageErrors++
		}
	}
	t.VolatileChars = t.PromptChars - t.CacheableChars
	t.CacheableShare = float64(shareQ(t.CacheableChars, t.PromptChars)) / 10000
	return t
}

// shareQ is part/whole in ten-thousandths, rounded down.
func shareQ(part, whole int64) int64 {
	if whole <= 0 {
		return 0
	}
	if part > 1<<40 { // no overflow of part * 10000
		return int64(float64(part) / float64(whole) * 10000)
	}
	return part * 10000 / whole
}

// CacheableChars is what the group's later calls can read from a cache:
// PrefixChars × (Calls − 1).
func (g *CacheGroup) CacheableChars() int64 { return g.PrefixChars * int64(g.Calls-1) }

// AnthropicBody is the export's body for ProviderAnthropic (the Messages
// API), as JSON decodes into it; the fields of the options' Body are in the
// JSON, not here.
type AnthropicBody struct {
	System   []AnthropicBlock   `json:"system,omitempty"` // the leading system messages' blocks; absent when there is none
	Messages []AnthropicMessage `json:"messages"`
}

// AnthropicMessage is a message of an AnthropicBody: a user or assistant
// message (the system ones are its System).
type AnthropicMessage struct {
	Role    string           `json:"role"`
	Content []AnthropicBlock `json:"content"`
}

// AnthropicBlock is a text block of an AnthropicBody.
type AnthropicBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *CacheControl `json:"cache_control,omitempty"` // a cache breakpoint: set on at most ExportOptions.MaxBreakpoints blocks
}

// CacheControl is Anthropic's cache breakpoint.
type CacheControl struct {
	Type string `json:"type"`          // always "ephemeral"
	TTL  string `json:"ttl,omitempty"` // the options' TTL, when given
}

// OpenAIChatBody is the export's body for ProviderOpenAIChat (the Chat
// Completions API).
type OpenAIChatBody struct {
	Messages           []OpenAIChatMessage `json:"messages"`
	PromptCacheKey     string              `json:"prompt_cache_key"`               // the run prefix digest, or the options' CacheKey
	PromptCacheOptions *PromptCacheOptions `json:"prompt_cache_options,omitempty"` // with the option explicit_breakpoints
}

// OpenAIChatMessage is a message of an OpenAIChatBody.
type OpenAIChatMessage struct {
	Role    string       `json:"role"`
	Content []OpenAIText `json:"content"`
}

// OpenAIText is a text block of an OpenAIChatBody.
type OpenAIText struct {
	Type                  string                 `json:"type"`
	Text                  string                 `json:"text"`
	PromptCacheBreakpoint *PromptCacheBreakpoint `json:"prompt_cache_breakpoint,omitempty"` // at a breakpoint, with the option explicit_breakpoints
}

// PromptCacheBreakpoint is OpenAI's explicit breakpoint on a block.
type PromptCacheBreakpoint struct {
	Mode string `json:"mode"` // always "explicit"
}

// PromptCacheOptions are OpenAI's request-level cache options.
type PromptCacheOptions struct {
	Mode string `json:"mode"` // always "explicit": OpenAI places no breakpoint of its own
}

// OpenRouterBody is the export's body for ProviderOpenRouter (its chat
// completions): OpenAI's messages, the system ones among them, with
// Anthropic's text blocks and cache_control.
type OpenRouterBody struct {
	Messages []OpenRouterMessage `json:"messages"`
}

// OpenRouterMessage is a message of an OpenRouterBody.
type OpenRouterMessage struct {
	Role    string           `json:"role"`
	Content []AnthropicBlock `json:"content"`
}

// BedrockBody is the export's body for ProviderBedrockConverse (Bedrock
// Runtime's Converse): each message the blocks of a run of consecutive
// messages of one role.
type BedrockBody struct {
	System   []BedrockBlock   `json:"system,omitempty"` // the leading system messages' blocks; absent when there is none
	Messages []BedrockMessage `json:"messages"`
}

// BedrockMessage is a message of a BedrockBody.
type BedrockMessage struct {
	Role    string         `json:"role"`
	Content []BedrockBlock `json:"content"`
}

// BedrockBlock is a block of a BedrockBody: a text, or the cache point
// after a block at a breakpoint.
type BedrockBlock struct {
	Text       string             `json:"text,omitempty"`
	CachePoint *BedrockCachePoint `json:"cachePoint,omitempty"`
}

// BedrockCachePoint is Bedrock's cache point.
type BedrockCachePoint struct {
	Type string `json:"type"`          // "default"
	TTL  string `json:"ttl,omitempty"` // the option ttl, when given
}

// GeminiBody is the export's body for ProviderGemini (generateContent):
// each content the parts of a run of consecutive messages of one role.
type GeminiBody struct {
	SystemInstruction *GeminiSystem   `json:"systemInstruction,omitempty"` // the leading system messages' parts; absent when there is none
	Contents          []GeminiContent `json:"contents"`
	CachedContent     string          `json:"cachedContent,omitempty"` // the option cached_content, when given
}

// GeminiSystem is a GeminiBody's systemInstruction.
type GeminiSystem struct {
	Parts []GeminiPart `json:"parts"`
}

// GeminiContent is a content of a GeminiBody: role "user" or "model".
type GeminiContent struct {
	Role  string       `json:"role"`
	Parts []GeminiPart `json:"parts"`
}

// GeminiPart is a text part of a GeminiBody.
type GeminiPart struct {
	Text string `json:"text"`
}

// OpenAIResponsesBody is the export's body for ProviderOpenAIResponses (the
// Responses API).
type OpenAIResponsesBody struct {
	Input              []ResponsesMessage  `json:"input"`
	PromptCacheKey     string              `json:"prompt_cache_key"`               // the run prefix digest, or the options' CacheKey
	PromptCacheOptions *PromptCacheOptions `json:"prompt_cache_options,omitempty"` // with the option explicit_breakpoints
}

// ResponsesMessage is a message of an OpenAIResponsesBody: its blocks are
// of type "input_text", an assistant message's of type "output_text".
type ResponsesMessage struct {
	Role    string          `json:"role"`
	Content []ResponsesText `json:"content"`
}

// ResponsesText is a text block of an OpenAIResponsesBody.
type ResponsesText struct {
	Type                  string                 `json:"type"`
	Text                  string                 `json:"text"`
	PromptCacheBreakpoint *PromptCacheBreakpoint `json:"prompt_cache_breakpoint,omitempty"` // an input_text's, with the option explicit_breakpoints
}

// DefaultExportOptions are the export's defaults: MaxBreakpoints
// breakpoints, a look-back of DefaultLookback blocks, no TTL, the run
// prefix digest for OpenAI's cache key. Start a Go host's options from
// them: the zero ExportOptions asks for no breakpoint and no look-back.
func DefaultExportOptions() ExportOptions {
	return ExportOptions{MaxBreakpoints: MaxBreakpoints, Lookback: DefaultLookback}
}

// AppendMsgpack appends o as the export call's options argument (a map
// of the wire's keys: ttl when not "", max_breakpoints, lookback,
// prompt_cache_key when not "", explicit_breakpoints when true,
// cached_content when not "", body when not nil); a nil o is nil, the
// defaults. The core judges the values (a negative count, a TTL that is
// none, a body that is no map are its errors).
func (o *ExportOptions) AppendMsgpack(dst []byte) []byte {
	if o == nil {
		return append(dst, 0xc0)
	}
	n := 2
	for _, given := range []bool{o.TTL != "", o.CacheKey != "", o.Explicit, o.CachedContent != "", o.Body != nil} {
		if given {
			n++
		}
	}
	dst = appendMapHeader(dst, n)
	if o.TTL != "" {
		dst = appendStr(appendStr(dst, "ttl"), o.TTL)
	}
	dst = msgp.AppendInt64(appendStr(dst, "max_breakpoints"), int64(o.MaxBreakpoints))
	dst = msgp.AppendInt64(appendStr(dst, "lookback"), int64(o.Lookback))
	if o.CacheKey != "" {
		dst = appendStr(appendStr(dst, "prompt_cache_key"), o.CacheKey)
	}
	if o.Explicit {
		dst = append(appendStr(dst, "explicit_breakpoints"), 0xc3)
	}
	if o.CachedContent != "" {
		dst = appendStr(appendStr(dst, "cached_content"), o.CachedContent)
	}
	if o.Body != nil {
		dst = append(appendStr(dst, "body"), o.Body...)
	}
	return dst
}

// Export is the export call run natively (docs/SPEC.md §7.13): the
// provider's request body for request (a msgpack request map, judged as
// the export judges msgpack bytes: docs/SPEC.md §7.9's sides) as a msgpack
// map, or the error the call answers (wirejson.FromMsgpack writes the
// body's JSON, as wasmhost's Runner.Export returns it). opts nil are the
// defaults.
func Export(request []byte, provider string, opts *ExportOptions) ([]byte, *Error) {
	args, err := AppendArgs(nil, abi.CallExport, appendBin(nil, request), appendStr(nil, provider), opts.AppendMsgpack(nil))
	if err != nil {
		return nil, err
	}
	body := AppendExportBytes(nil, args, func([]byte) ([]byte, *Error) {
		return nil, newError(CodeMalformedRequest, "", "core.Export takes a msgpack request; JSON text is wasmhost's Runner.Export's (or wirejson's)")
	})
	if IsMapError(body) {
		m, _, _ := msgp.ReadIntfBytes(body)
		mm, _ := m.(map[string]any)
		if e, ok := errorOf(mm).(*Error); ok {
			return nil, e
		}
		return nil, newError(CodeInternal, "", "the export answered an error that cannot be read")
	}
	return body, nil
}

// IsMapError reports whether answer, of a call answering a msgpack map
// (abi.AnswerMap), is the error answer {"error": …} (AppendMapError): no
// body the export writes starts with that key.
func IsMapError(answer []byte) bool {
	return len(answer) > 7 && string(answer[:7]) == "\x81\xa5error"
}

// appendBin appends b as a msgpack bin.
func appendBin(dst, b []byte) []byte {
	switch n := len(b); {
	case n < 1<<8:
		dst = append(dst, 0xc4, byte(n))
	case n < 1<<16:
		dst = append(dst, 0xc5, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(dst, b...)
}
