package core

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
	Messages       []Message `json:"messages"`
	PromptCacheKey string    `json:"prompt_cache_key"` // the run prefix digest, or the options' CacheKey
}

// OpenAIResponsesBody is the export's body for ProviderOpenAIResponses (the
// Responses API).
type OpenAIResponsesBody struct {
	Input          []ResponsesMessage `json:"input"`
	PromptCacheKey string             `json:"prompt_cache_key"` // the run prefix digest, or the options' CacheKey
}

// ResponsesMessage is a message of an OpenAIResponsesBody: its blocks are
// of type "input_text", an assistant message's of type "output_text".
type ResponsesMessage struct {
	Role    string          `json:"role"`
	Content []ResponsesText `json:"content"`
}

// ResponsesText is a text block of an OpenAIResponsesBody.
type ResponsesText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}
