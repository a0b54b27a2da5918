package main

// The wire's request and response types, written into the bindings as
// Python TypedDicts (_types.py) and TypeScript interfaces (types.d.ts) from
// the Go types of package core: reflect gives the fields and their types,
// the Go source (go/ast) their docs. What Go cannot say is in the table
// below: the binding's name of a type, the wire name where it is not the
// field's name in snake_case, the literal values of a string field, which
// keys may be absent, the fields a host never sees (Go's bookkeeping), the
// fields Go keeps outside the struct (v, ok), and a doc where Go's speaks of
// Go (-1 for none, "" for none).

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"unicode"

	"github.com/polyloop/assembly/core"
)

const (
	typesPyPath = "bindings/python/src/polyloop_assembly/_types.py"
	typesTsPath = "bindings/js/src/types.d.ts"
)

// texpr is the type of a field, written in either language by pyType and
// tsType.
type texpr struct {
	kind  string   // "str", "int", "float", "bool", "any", "list", "dict", "named", "null", "lit", "union"
	elem  *texpr   // list, dict (its values), null
	elems []*texpr // union: its members
	name  string   // named: the type's name in the table (its py or ts name is written)
	lits  []string // lit: the values
	py    string   // Python's spelling, where not the kind's
	ts    string   // TypeScript's spelling, where not the kind's
	alias string   // lit, union: written as this alias's name (Role)
}

func lit(values ...string) *texpr { return &texpr{kind: "lit", lits: values} }
func named(name string) *texpr    { return &texpr{kind: "named", name: name} }
func null(t *texpr) *texpr        { return &texpr{kind: "null", elem: t} }
func prim(kind string) *texpr     { return &texpr{kind: kind} }
func list(t *texpr) *texpr        { return &texpr{kind: "list", elem: t} }
func union(ts ...*texpr) *texpr   { return &texpr{kind: "union", elems: ts} }

// aliased is t written as the alias name (its definition in aliases).
func aliased(name string, t *texpr) *texpr {
	c := *t
	c.alias = name
	return &c
}

// spelled is t spelled py in Python and ts in TypeScript ("" where t's
// own spelling).
func spelled(t *texpr, py, ts string) *texpr {
	c := *t
	c.py, c.ts = py, ts
	return &c
}

// field is one key of a generated type.
type field struct {
	wire     string
	typ      *texpr
	optional bool // the key may be absent (Python total=False, TypeScript ?)
	doc      string
}

// shape is one generated type.
type shape struct {
	py, ts string // its names; "" where a binding does not have it
	doc    string
	tsDoc  string // TypeScript's only
	fields []field
	final  bool // Python: @final, so that `"key" in value` tells it from the other members of a union
}

// fieldOpt says what Go does not of one field, by its Go name.
type fieldOpt struct {
	wire     string // the wire name; default: the Go name in snake_case
	typ      *texpr // the type; default: from the Go type
	ts       string // TypeScript's spelling of the Go type
	optional bool
	doc      string  // the doc; default: the Go field's, its Go names made wire names
	skip     bool    // never on the wire (Go's bookkeeping); unexported fields never are
	after    []field // keys the JSON writes after this field, from it (a share, a difference)
}

// typeSpec is one row of the table: a Go struct (nil for a type Go has no
// struct for) and what the bindings add.
type typeSpec struct {
	py, ts string
	goType any
	doc    string
	tsDoc  string  // said in TypeScript only, after doc
	extra  []field // keys Go keeps outside the struct, before its fields
	opts   map[string]fieldOpt
	each   *texpr // every field of goType gets this type (a match per digest)
	final  bool   // a member of a union told apart by its keys (shape.final)
}

// The literal types; their values are core's constants.
var (
	roleType        = &texpr{kind: "lit", lits: []string{core.RoleSystem, core.RoleUser, core.RoleAssistant}, alias: "Role"}
	versionType     = spelled(prim("int"), "", "number | bigint")
	wireVersion     = spelled(prim("int"), "", fmt.Sprint(core.WireVersion))
	segmentType     = lit("run", "injections", "goal", "history")
	sideKindType    = lit("request", "messages")
	differenceKinds = lit(core.DiffRole, core.DiffText, core.DiffBlocks, core.DiffLength)
	providerType    = aliased("Provider", lit(core.Providers...))
	causeType       = aliased("CacheBreakCause", lit(core.CauseRun, core.CauseInjections, core.CauseGoal, core.CauseHistory, core.CauseStepsRemoved))
	usageClassType  = aliased("CacheUsageClass", lit(core.UsageFirst, core.UsageHit, core.UsagePrefixBreak, core.UsageProviderMiss, core.UsageWriteOnly, core.UsageNone, core.UsageInvalid, core.UsageUnknown))
	ttlType         = lit("5m", "1h")
	countType       = spelled(prim("int"), "", "number | bigint")
	// the export's bodies; a Responses message is an input or an output one
	responsesMessage = aliased("ResponsesMessage", union(named("ResponsesInputMessage"), named("ResponsesOutputMessage")))
	exportBody       = aliased("ExportBody", union(named("AnthropicBody"), named("OpenAIChatBody"), named("OpenAIResponsesBody"), named("OpenRouterBody"), named("BedrockBody"), named("GeminiBody")))
)

// aliases are the types written once under their own name (t.alias), with
// their docs: literals first, then unions of the table's types.
var aliases = []struct {
	t   *texpr
	doc string
}{
	{roleType, "The roles of a message."},
	{providerType, "The request bodies export writes (" + spec("§7.13") + ")."},
	{causeType, "Why a call's prompt left the previous call's (" + spec("§7.12") + ")."},
	{usageClassType, "A call's recorded usage, classed (" + spec("§7.12") + ")."},
	{responsesMessage, "A message of the Responses API's `input`: an assistant message's blocks are `output_text`, the others' `input_text`."},
	{exportBody, "The body export writes, one per provider; the options' `body` fields are in it too, first."},
}

// the breaks' excerpts' doc, with their bounds in code points.
var breakExcerptDoc = fmt.Sprintf("the %%s prompt's text from the break, at most %d code points (\"…\" marks a cut); null when it has no message at `message`", core.ExcerptAfter)

// the excerpts' doc, with their bounds in code points.
var excerptDoc = fmt.Sprintf("side %%s's text from the difference, at most %d code points (\"…\" marks a cut); null when that side's prompt has no message at `message`", core.ExcerptAfter)

var typeTable = []typeSpec{
	{py: "Block", ts: "TextBlock", goType: core.Block{},
		doc:  "A content block; `text` is the only block type of wire version 1.",
		opts: map[string]fieldOpt{"Type": {typ: lit(core.BlockTypeText)}}},
	{py: "Message", ts: "Message", goType: core.Message{},
		doc:  "A chat message: a role and its content blocks.",
		opts: map[string]fieldOpt{"Role": {typ: roleType}}},
	{py: "Injection", ts: "Injection", goType: core.Injection{},
		doc: "One entry of an injection channel, pasted as one user message."},
	{py: "Step", ts: "Step", goType: core.Step{},
		doc: "One completed step of the loop: the text handed back for the history and the observation."},
	{py: "AssembleRequest", ts: "AssembleRequest", goType: core.Request{},
		doc: "An assembly request (" + spec("§2") + "). Only `observation_template` is required. " +
			"Any value is accepted at run time: the core alone decides what is valid.",
		tsDoc: "Plain objects, arrays and strings; `injections` may also be a `Map`. Any other JavaScript value is encoded " +
			"faithfully (or as a value the core rejects) so that a mistake gets the core's own error code and path; " +
			"see the README's \"JavaScript values\".",
		extra: []field{{wire: "v", typ: versionType, optional: true, doc: fmt.Sprintf("The wire version; %d (the default).", core.WireVersion)}},
		opts: map[string]fieldOpt{
			"RunMessages":    {optional: true},
			"Injections":     {optional: true, doc: "Channel name to entries; channels are pasted in code-point order of their names.", ts: "Record<string, Injection[]> | Map<string, Injection[]>"},
			"GoalMessages":   {optional: true},
			"Steps":          {optional: true},
			"MaxPromptChars": {optional: true, ts: "number | bigint | null"},
		}},
	{py: "Injected", ts: "Injected", goType: core.Injected{},
		doc:  "One message pasted by the injection slot.",
		opts: map[string]fieldOpt{"MessageIndex": {doc: "The index of the pasted message in `messages`."}}},
	{py: "PrefixDigests", ts: "PrefixDigests", goType: core.PrefixDigests{},
		doc: "Lowercase hex SHA-256 of the canonical encoding of `messages` up to the end of each segment; " +
			"equal digests mean an identical cacheable prefix."},
	{py: "AssembleResponse", ts: "AssembleResponse", goType: core.Response{},
		doc: "A successful assembly (" + spec("§6") + ").",
		extra: []field{
			{wire: "v", typ: wireVersion, doc: "The wire version."},
			{wire: "ok", typ: spelled(prim("bool"), "", "true"), doc: "Always true."},
		}},
	{py: "ErrorDetail", ts: "ErrorDetail", goType: core.Error{},
		doc: "The `error` member of an error response.",
		opts: map[string]fieldOpt{
			"Code":   {typ: spelled(prim("str"), "ErrorCode", "ErrorCode"), doc: "The error code (" + spec("§6") + ")."},
			"Path":   {doc: "The offending value, like `steps[3].observation`; empty for the whole request."},
			"Offset": {optional: true, doc: "The code-point offset of the problem in the template; only in `invalid_template` errors."},
			"Detail": {skip: true},
		}},
	{py: "ErrorResponse", ts: "ErrorResponse",
		doc: "An error response, as the wire function (assemble_bytes, assembleBytes) returns it, decoded.",
		extra: []field{
			{wire: "v", typ: wireVersion, doc: "The wire version."},
			{wire: "ok", typ: spelled(prim("bool"), "", "false"), doc: "Always false."},
			{wire: "error", typ: named("ErrorDetail")},
		}},
	{py: "CompareSide", ts: "CompareSide", goType: core.CompareSide{},
		doc:  "One side of a comparison: a request (assembled) or a recorded message list.",
		opts: map[string]fieldOpt{"Kind": {typ: sideKindType, doc: "`\"request\"` or `\"messages\"`."}, "Messages": {doc: "The number of the side's messages."}}},
	{py: "Difference", ts: "Difference", goType: core.Difference{},
		doc: "Where two prompts first differ (" + spec("§7.9") + ").",
		opts: map[string]fieldOpt{
			"Kind":    {typ: differenceKinds},
			"Segment": {typ: null(segmentType), doc: "The segment of `message` in the layout of side b (of side a when b is a recorded list); null when neither side is a request."},
			"Step":    {typ: null(prim("int")), doc: "The step of a history message; null otherwise."},
			"RoleA":   {typ: null(prim("str")), doc: "The role of side a's message; null when its prompt has no message at `message`."},
			"RoleB":   {typ: null(prim("str")), doc: "The role of side b's message; null when its prompt has no message at `message`."},
			"HasA":    {skip: true},
			"HasB":    {skip: true},
			"Before":  {wire: "excerpt_before", doc: fmt.Sprintf("The common text just before the difference, at most %d code points (\"…\" marks a cut).", core.ExcerptBefore)},
			"A":       {wire: "excerpt_a", typ: null(prim("str")), doc: fmt.Sprintf(excerptDoc, "a")},
			"B":       {wire: "excerpt_b", typ: null(prim("str")), doc: fmt.Sprintf(excerptDoc, "b")},
		}},
	{py: "PrefixDigestsMatch", ts: "PrefixDigestsMatch", goType: core.PrefixDigests{}, each: null(prim("bool")),
		doc: "Whether each prefix digest still matches; null where it cannot be told (neither side is a request)."},
	{py: "Comparison", ts: "Comparison", goType: core.Comparison{},
		doc: "The answer of compare (" + spec("§7.9") + ").",
		opts: map[string]fieldOpt{
			"First":   {wire: "first_difference"},
			"Digests": {wire: "prefix_digests", typ: named("PrefixDigestsMatch")},
		}},
	{py: "CacheBreak", ts: "CacheBreak", goType: core.CacheBreak{},
		doc: "Where a call's prompt leaves the previous call's (" + spec("§7.12") + ").",
		opts: map[string]fieldOpt{
			"Segment":     {typ: segmentType, doc: "The first of the run, injection and goal segments whose prefix digest changed, else `\"history\"`."},
			"Message":     {doc: "The index of the first message that differs."},
			"Char":        {doc: "The code-point offset of the difference in that message's text, its blocks' texts joined."},
			"Step":        {typ: null(prim("int")), doc: "The step of a history message; null otherwise."},
			"Cause":       {typ: causeType, doc: "`\"steps_removed\"` when the history ends before the previous one's, every message before it equal."},
			"Before":      {wire: "excerpt_before", doc: fmt.Sprintf("The common text just before the break, at most %d code points (\"…\" marks a cut).", core.ExcerptBefore)},
			"Previous":    {wire: "excerpt_previous", typ: null(prim("str")), doc: fmt.Sprintf(breakExcerptDoc, "previous")},
			"This":        {wire: "excerpt_this", typ: null(prim("str")), doc: fmt.Sprintf(breakExcerptDoc, "call's")},
			"HasPrevious": {skip: true},
			"HasThis":     {skip: true},
		}},
	{py: "CacheUsage", ts: "CacheUsage", goType: core.CacheUsage{},
		doc: "A call's recorded provider usage and its class.",
		opts: map[string]fieldOpt{
			"CachedTokens": {typ: null(prim("int")), doc: "The tokens the provider read from its cache (Anthropic's `cache_read_input_tokens`, " +
				"OpenAI's `cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`, Bedrock's `cacheReadInputTokens`, " +
				"Gemini's `cachedContentTokenCount`: the largest present, 0 when none is); " +
				"null for `\"no_usage\"`, `\"invalid_usage\"` and `\"unknown_usage\"`."},
			"WrittenTokens": {typ: null(prim("int")), doc: "The tokens the provider wrote to its cache (Anthropic's `cache_creation_input_tokens` " +
				"or its `cache_creation` 5m + 1h, OpenAI's `cache_write_tokens`, Bedrock's `cacheWriteInputTokens`: the largest present); " +
				"null when the usage records no writes (DeepSeek, Gemini) or has no class that reads it."},
			"Class": {typ: usageClassType},
			"MissReason": {typ: prim("str"), optional: true, doc: "The provider's own reason for a miss, as its response gives it " +
				"(Anthropic's `diagnostics.cache_miss_reason.type`); only when the response holds one."},
			"MissReasonDisagrees": {optional: true, doc: "With `miss_reason`: true when the provider names a change the prompts do not hold " +
				"(`tools_changed`, `model_changed`; `system_changed`, `messages_changed` where the prompt extends the previous one)."},
			"Note": {typ: prim("str"), optional: true, doc: "Only with `\"unknown_usage\"`: the usage shapes the report reads."},
			"Err": {wire: "error", typ: named("ErrorDetail"), optional: true,
				doc: "Only with `\"invalid_usage\"`: why the usage cannot be read, its path within the call's usage (`usage…`)."},
		}},
	{py: "CacheCall", ts: "CacheCall", goType: core.CacheCall{}, final: true,
		doc: "One valid call of a cache report (" + spec("§7.12") + ").",
		opts: map[string]fieldOpt{
			"Err":         {skip: true},
			"Previous":    {typ: null(prim("int")), doc: "The index of the call this one is compared with (the last valid one before it); null for the first."},
			"Extends":     {doc: "True when the prompt is the previous call's, whole, followed by more (or the same prompt)."},
			"Break":       {doc: "Where the prompt leaves the previous call's; null when it extends it (or is the first)."},
			"PromptChars": {doc: "The prompt's size in code points."},
			"CacheablePrefixChars": {doc: "The code points before the first difference from the previous prompt (all of it when this one extends it).",
				after: []field{
					{wire: "cacheable_share", typ: prim("float"), doc: "`cacheable_prefix_chars` / `prompt_chars`, four decimals, rounded down."},
					{wire: "new_chars", typ: prim("int"), doc: "`prompt_chars` − `cacheable_prefix_chars`."},
				}},
			"Digests": {wire: "prefix_digests"},
			"Usage":   {doc: "The recorded usage and its class; null when the report was given no usage."},
		}},
	{py: "CacheCallError", ts: "CacheCallError", final: true,
		doc:   "The call of an invalid request in a cache report: the error it gets on its own. It is left out of the run.",
		extra: []field{{wire: "error", typ: named("ErrorDetail")}}},
	{py: "CacheGroup", ts: "CacheGroup", goType: core.CacheGroup{},
		doc: "The calls that share one stable prefix (the run, injection and goal segments).",
		opts: map[string]fieldOpt{
			"Digests": {wire: "prefix_digests"},
			"Calls":   {doc: "The calls using this prefix."},
			"PrefixChars": {doc: "The code points of the prefix.",
				after: []field{{wire: "cacheable_chars", typ: prim("int"), doc: "`prefix_chars` × (`calls` − 1): what the later calls can read from a cache."}}},
		}},
	{py: "CacheTotals", ts: "CacheTotals", goType: core.CacheTotals{},
		doc: "A cache report's totals.",
		opts: map[string]fieldOpt{
			"Calls":          {doc: "The valid calls."},
			"Errors":         {doc: "The invalid requests."},
			"Breaks":         {doc: "The valid calls with a break."},
			"PromptChars":    {doc: "The valid calls' `prompt_chars`, summed."},
			"CacheableChars": {doc: "Their `cacheable_prefix_chars`, summed."},
			"VolatileChars":  {doc: "`prompt_chars` − `cacheable_chars`: what no cache can serve."},
			"CacheableShare": {doc: "`cacheable_chars` / `prompt_chars`, four decimals, rounded down."},
		}},
	{py: "CacheReport", ts: "CacheReport", goType: core.CacheReport{},
		doc: "The answer of cache_report (" + spec("§7.12") + "): narrow a call with `\"error\" in call`.",
		opts: map[string]fieldOpt{
			"Calls": {typ: list(union(named("CacheCall"), named("CacheCallError"))), doc: "One per request, in order."},
			"Groups": {doc: "One per distinct stable prefix, in order of first use.",
				after: []field{{wire: "totals", typ: named("CacheTotals")}}},
		}},
	{py: "ExportOptions", ts: "ExportOptions", goType: core.ExportOptions{},
		doc: "The options of export (" + spec("§7.13") + "), keys as on the wire.",
		opts: map[string]fieldOpt{
			"TTL":            {typ: ttlType, optional: true, doc: "The `ttl` of Anthropic's `cache_control`; left out when not given."},
			"MaxBreakpoints": {typ: countType, optional: true, doc: fmt.Sprintf("Anthropic's cache breakpoints, 0 to %d (the default).", core.MaxBreakpoints)},
			"Lookback":       {typ: countType, optional: true, doc: fmt.Sprintf("Blocks from a breakpoint within which the provider looks for a cached prefix (default %d); 0 for no look-back breakpoint.", core.DefaultLookback)},
			"CacheKey":       {wire: "prompt_cache_key", optional: true, doc: "OpenAI's `prompt_cache_key`; default: the run prefix digest."},
			"CachedContent": {wire: "cached_content", optional: true,
				doc: "With `gemini`: the name of the cache (`cachedContents/…`) made from `gemini-cache`'s body; the body then holds the goal and the history only, and `cachedContent`."},
			"Explicit": {wire: "explicit_breakpoints", optional: true,
				doc: "With `openai-chat` or `openai-responses`: OpenAI's `prompt_cache_breakpoint` on the blocks of the breakpoint policy, with `prompt_cache_options` `{mode: \"explicit\"}`."},
			"Body": {typ: &texpr{kind: "dict", elem: prim("any")}, optional: true,
				doc: "The provider's other fields (`model`, `max_tokens`, `tools`…), written first as given; never a key export writes itself."},
		}},
	{py: "CacheControl", ts: "CacheControl", goType: core.CacheControl{},
		doc:  "Anthropic's cache breakpoint on a block.",
		opts: map[string]fieldOpt{"Type": {typ: lit("ephemeral")}, "TTL": {typ: ttlType, optional: true, doc: "The option `ttl`, when given."}}},
	{py: "AnthropicBlock", ts: "AnthropicBlock", goType: core.AnthropicBlock{},
		doc: "A text block of Anthropic's Messages API.",
		opts: map[string]fieldOpt{
			"Type":         {typ: lit(core.BlockTypeText)},
			"CacheControl": {typ: named("CacheControl"), optional: true, doc: "A cache breakpoint: on at most `max_breakpoints` blocks."},
		}},
	{py: "AnthropicMessage", ts: "AnthropicMessage", goType: core.AnthropicMessage{},
		doc:  "A message of Anthropic's Messages API: the system messages are the body's `system`.",
		opts: map[string]fieldOpt{"Role": {typ: lit(core.RoleUser, core.RoleAssistant)}}},
	{py: "AnthropicBody", ts: "AnthropicBody", goType: core.AnthropicBody{},
		doc:  "The body export writes for `\"anthropic\"` (the Messages API).",
		opts: map[string]fieldOpt{"System": {optional: true, doc: "The leading system messages' blocks; absent when there is none."}}},
	{py: "PromptCacheBreakpoint", ts: "PromptCacheBreakpoint", goType: core.PromptCacheBreakpoint{},
		doc: "OpenAI's explicit cache breakpoint on a block.", opts: map[string]fieldOpt{"Mode": {typ: lit("explicit")}}},
	{py: "PromptCacheOptions", ts: "PromptCacheOptions", goType: core.PromptCacheOptions{},
		doc: "OpenAI's request-level cache options.", opts: map[string]fieldOpt{"Mode": {typ: lit("explicit")}}},
	{py: "OpenAIText", ts: "OpenAIText", goType: core.OpenAIText{},
		doc: "A text block of the Chat Completions API.",
		opts: map[string]fieldOpt{
			"Type":                  {typ: lit(core.BlockTypeText)},
			"PromptCacheBreakpoint": {typ: named("PromptCacheBreakpoint"), optional: true, doc: "At a breakpoint, with the option `explicit_breakpoints`."},
		}},
	{py: "OpenAIChatMessage", ts: "OpenAIChatMessage", goType: core.OpenAIChatMessage{},
		doc:  "A message of the Chat Completions API.",
		opts: map[string]fieldOpt{"Role": {typ: lit(core.RoleSystem, core.RoleUser, core.RoleAssistant)}}},
	{py: "OpenAIChatBody", ts: "OpenAIChatBody", goType: core.OpenAIChatBody{},
		doc: "The body export writes for `\"openai-chat\"` (the Chat Completions API).",
		opts: map[string]fieldOpt{
			"PromptCacheKey":     {doc: "The run prefix digest, or the option `prompt_cache_key`."},
			"PromptCacheOptions": {typ: named("PromptCacheOptions"), optional: true, doc: "`{mode: \"explicit\"}` with the option `explicit_breakpoints`."},
		}},
	{py: "OpenRouterMessage", ts: "OpenRouterMessage", goType: core.OpenRouterMessage{},
		doc:  "A message of OpenRouter's chat completions: Anthropic's text blocks on OpenAI's message.",
		opts: map[string]fieldOpt{"Role": {typ: lit(core.RoleSystem, core.RoleUser, core.RoleAssistant)}}},
	{py: "OpenRouterBody", ts: "OpenRouterBody", goType: core.OpenRouterBody{},
		doc: "The body export writes for `\"openrouter\"` (its chat completions, with `cache_control`)."},
	{py: "ResponsesInputText", ts: "ResponsesInputText", goType: core.ResponsesText{},
		doc: "A text block of a system or user message of the Responses API.", opts: map[string]fieldOpt{"Type": {typ: lit("input_text")},
			"PromptCacheBreakpoint": {typ: named("PromptCacheBreakpoint"), optional: true, doc: "At a breakpoint, with the option `explicit_breakpoints`."}}},
	{py: "ResponsesOutputText", ts: "ResponsesOutputText", goType: core.ResponsesText{},
		doc: "A text block of an assistant message of the Responses API.", opts: map[string]fieldOpt{"Type": {typ: lit("output_text")},
			"PromptCacheBreakpoint": {skip: true}}},
	{py: "ResponsesInputMessage", ts: "ResponsesInputMessage", goType: core.ResponsesMessage{},
		doc:  "A system or user message of the Responses API.",
		opts: map[string]fieldOpt{"Role": {typ: lit(core.RoleSystem, core.RoleUser)}, "Content": {typ: list(named("ResponsesInputText"))}}},
	{py: "ResponsesOutputMessage", ts: "ResponsesOutputMessage", goType: core.ResponsesMessage{},
		doc:  "An assistant message of the Responses API.",
		opts: map[string]fieldOpt{"Role": {typ: lit(core.RoleAssistant)}, "Content": {typ: list(named("ResponsesOutputText"))}}},
	{py: "OpenAIResponsesBody", ts: "OpenAIResponsesBody", goType: core.OpenAIResponsesBody{},
		doc: "The body export writes for `\"openai-responses\"` (the Responses API).",
		opts: map[string]fieldOpt{
			"Input":              {typ: list(responsesMessage)},
			"PromptCacheKey":     {doc: "The run prefix digest, or the option `prompt_cache_key`."},
			"PromptCacheOptions": {typ: named("PromptCacheOptions"), optional: true, doc: "`{mode: \"explicit\"}` with the option `explicit_breakpoints`."},
		}},
	{py: "BedrockCachePoint", ts: "BedrockCachePoint", goType: core.BedrockCachePoint{},
		doc:  "Bedrock's cache point.",
		opts: map[string]fieldOpt{"Type": {typ: lit("default")}, "TTL": {typ: ttlType, optional: true, doc: "The option `ttl`, when given."}}},
	{py: "BedrockBlock", ts: "BedrockBlock", goType: core.BedrockBlock{},
		doc: "A block of Bedrock's Converse: a text, or the cache point after a block at a breakpoint.",
		opts: map[string]fieldOpt{
			"Text":       {optional: true, doc: "A text block's text."},
			"CachePoint": {wire: "cachePoint", typ: named("BedrockCachePoint"), optional: true, doc: "A cache point: after at most `max_breakpoints` blocks."},
		}},
	{py: "BedrockMessage", ts: "BedrockMessage", goType: core.BedrockMessage{},
		doc:  "A message of Bedrock's Converse: the blocks of consecutive prompt messages of its role, in order.",
		opts: map[string]fieldOpt{"Role": {typ: lit(core.RoleUser, core.RoleAssistant)}}},
	{py: "BedrockBody", ts: "BedrockBody", goType: core.BedrockBody{},
		doc:  "The body export writes for `\"bedrock-converse\"` (Bedrock Runtime's Converse).",
		opts: map[string]fieldOpt{"System": {optional: true, doc: "The leading system messages' blocks; absent when there is none."}}},
	{py: "GeminiPart", ts: "GeminiPart", goType: core.GeminiPart{}, doc: "A text part of Gemini's generateContent."},
	{py: "GeminiSystem", ts: "GeminiSystem", goType: core.GeminiSystem{}, doc: "Gemini's systemInstruction: the leading system messages' parts."},
	{py: "GeminiContent", ts: "GeminiContent", goType: core.GeminiContent{},
		doc:  "A content of Gemini's generateContent: the parts of consecutive prompt messages of its role, in order.",
		opts: map[string]fieldOpt{"Role": {typ: lit(core.RoleUser, "model")}}},
	{py: "GeminiBody", ts: "GeminiBody", goType: core.GeminiBody{},
		doc: "The body export writes for `\"gemini\"` (generateContent) and `\"gemini-cache\"` (cachedContents.create).",
		opts: map[string]fieldOpt{"SystemInstruction": {wire: "systemInstruction", typ: named("GeminiSystem"), optional: true,
			doc: "The leading system messages' parts; absent when there is none, or with the option `cached_content`."},
			"CachedContent": {wire: "cachedContent", optional: true, doc: "The option `cached_content`, when given (`gemini`)."}}},
	{ts: "RecordedMessage",
		doc: "A recorded message: what a loop sent, one side of compare.",
		extra: []field{
			{wire: "role", typ: prim("str")},
			{wire: "content", typ: spelled(prim("str"), "", "string | TextBlock[]"), doc: "The text, or its blocks."},
		}},
}

// tsAliases are TypeScript's types that are no object (one side of
// compare: its JSON text or msgpack bytes too).
var tsAliases = [][3]string{
	{"CompareInput", "One side of compare: a request, a recorded message list, either as JSON text or msgpack bytes.", "AssembleRequest | RecordedMessage[] | string | Uint8Array"},
	{"ExportBodyOf<P extends Provider = Provider>", "The body export writes for provider `P`.",
		"{ anthropic: AnthropicBody; \"openai-chat\": OpenAIChatBody; \"openai-responses\": OpenAIResponsesBody; openrouter: OpenRouterBody; \"bedrock-converse\": BedrockBody; gemini: GeminiBody; \"gemini-cache\": GeminiBody }[P]"},
}

// goNames are core's exported names the field docs may use, written as the
// bindings call them.
var goNames = map[string][2]string{ // Python, TypeScript
	"ValidateTemplate": {"validate_template", "validateTemplate"},
}

// shapes builds the generated types from the table and the Go source in
// dir (core's directory).
func buildShapes(dir string) ([]shape, error) {
	docs, err := fieldDocs(dir)
	if err != nil {
		return nil, err
	}
	var out []shape
	for _, ts := range typeTable {
		s := shape{py: ts.py, ts: ts.ts, doc: ts.doc, tsDoc: ts.tsDoc, fields: append([]field(nil), ts.extra...), final: ts.final}
		if ts.goType != nil {
			fs, err := goFields(ts, docs)
			if err != nil {
				return nil, err
			}
			s.fields = append(s.fields, fs...)
		}
		out = append(out, s)
	}
	return out, nil
}

// goFields are the fields of ts's Go struct, as the wire has them.
func goFields(ts typeSpec, docs map[string]string) ([]field, error) {
	t := reflect.TypeOf(ts.goType)
	names := map[string]string{} // Go field name -> wire name, for the docs
	for i := range t.NumField() {
		f := t.Field(i)
		names[f.Name] = snake(f.Name)
		if o, ok := ts.opts[f.Name]; ok && o.wire != "" {
			names[f.Name] = o.wire
		}
	}
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		o := ts.opts[f.Name]
		if o.skip || !f.IsExported() {
			continue
		}
		fl := field{wire: names[f.Name], typ: o.typ, optional: o.optional, doc: o.doc}
		if ts.each != nil {
			fl.typ = ts.each
		}
		if fl.typ == nil {
			typ, err := goType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
			}
			fl.typ = typ
			if o.ts != "" {
				fl.typ = spelled(typ, "", o.ts)
			}
		}
		if fl.doc == "" && ts.each == nil {
			fl.doc = wireDoc(docs[t.Name()+"."+f.Name], f.Name, names)
		}
		fl.doc = sentence(fl.doc)
		out = append(out, fl)
		out = append(out, o.after...)
	}
	return out, nil
}

// goType is the wire type of a Go type: a struct is the table's type of it.
func goType(t reflect.Type) (*texpr, error) {
	switch t.Kind() {
	case reflect.String:
		return prim("str"), nil
	case reflect.Int, reflect.Int64:
		return prim("int"), nil
	case reflect.Bool:
		return prim("bool"), nil
	case reflect.Float64:
		return prim("float"), nil
	case reflect.Slice, reflect.Pointer, reflect.Map:
		if t.Kind() == reflect.Map && t.Key().Kind() != reflect.String {
			break
		}
		e, err := goType(t.Elem())
		kind := map[reflect.Kind]string{reflect.Slice: "list", reflect.Pointer: "null", reflect.Map: "dict"}[t.Kind()]
		return &texpr{kind: kind, elem: e}, err
	case reflect.Struct:
		for _, ts := range typeTable {
			if ts.goType != nil && ts.each == nil && reflect.TypeOf(ts.goType) == t {
				return named(ts.py), nil
			}
		}
		return nil, fmt.Errorf("the struct %s has no row in the type table", t)
	}
	return nil, fmt.Errorf("no wire type for the Go type %s: give the field a type in the type table", t)
}

// snake is a Go name in snake_case: EntryID is entry_id.
func snake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// fieldDocs reads the docs of the struct fields of package core's Go
// files in dir, by "Type.Field": the comment above a field, else the one
// after it.
func fieldDocs(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	docs := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fl := range st.Fields.List {
				text := fl.Doc.Text()
				if text == "" {
					text = fl.Comment.Text()
				}
				for _, name := range fl.Names {
					docs[spec.Name.Name+"."+name.Name] = strings.Join(strings.Fields(text), " ")
				}
			}
			return false
		})
	}
	return docs, nil
}

// goConsts are core's constants a field doc may name, by their values.
var goConsts = map[string]string{
	"BlockTypeText": core.BlockTypeText, "RoleSystem": core.RoleSystem, "RoleUser": core.RoleUser,
	"RoleAssistant": core.RoleAssistant, "DiffRole": core.DiffRole, "DiffText": core.DiffText,
	"DiffBlocks": core.DiffBlocks, "DiffLength": core.DiffLength,
}

var (
	leadName = regexp.MustCompile(`^([A-Z][A-Za-z]*) (is|are|says,) `)
	goWord   = regexp.MustCompile(`\b[A-Z][a-z]+[A-Z][A-Za-z]*\b|\b[A-Z]\b|\bnil\b|\b[A-Z][a-z]+\b`)
)

// wireDoc is a Go field's doc in the wire's words: "Name is x" is "X",
// the struct's field names are their wire names, core's constants their
// values; nil is null (each binding writes it its own way).
func wireDoc(doc, name string, names map[string]string) string {
	if doc == "" {
		return ""
	}
	if m := leadName.FindStringSubmatch(doc); m != nil && m[1] == name {
		doc = doc[len(m[0]):]
	} else if rest, ok := strings.CutPrefix(doc, name+" "); ok {
		doc = rest // "Name counts x": "Counts x"
	}
	doc = goWord.ReplaceAllStringFunc(doc, func(w string) string {
		if wire, ok := names[w]; ok {
			return "`" + wire + "`"
		}
		if v, ok := goConsts[w]; ok {
			return "`" + quote(v) + "`"
		}
		if w == "nil" {
			return "null"
		}
		return w
	})
	return doc
}

// sentence is doc with a capital and a full stop.
func sentence(doc string) string {
	if doc == "" {
		return ""
	}
	doc = strings.ToUpper(doc[:1]) + doc[1:]
	if !strings.HasSuffix(doc, ".") {
		doc += "."
	}
	return doc
}

// repoRoot is the directory of go.mod, from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory: run from the repository")
		}
		dir = up
	}
}

// addTypes adds _types.py and types.d.ts, from core's Go types, to out.
func addTypes(out map[string][]byte) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	shapes, err := buildShapes(filepath.Join(root, "core"))
	if err != nil {
		return err
	}
	out[typesPyPath], out[typesTsPath] = pythonTypes(shapes), typescriptTypes(shapes)
	return nil
}
