package core

import (
	"slices"

	"github.com/polyloop/assembly/core/msgp"
)

// The usage shapes the cache report reads (docs/SPEC.md §7.12): a table,
// one row per provider's usage object, so that a shape is a row and not
// code. readUsage finds the usage object (a whole response holds it under
// usage or usageMetadata) and gives it to readUsageShapes.

// usageRead is one call's recorded usage as the report reads it.
type usageRead struct {
	_       [0]func() // not comparable: no equality code in the module
	known   bool      // one of the shapes below: else the class is unknown_usage
	cached  int64     // the tokens read from the cache (the largest field present)
	written *int64    // the tokens written to it; nil where the shape records none
	reason  string    // the provider's own miss reason (Anthropic's cache_miss_reason.type), "" for none
}

// usageShape is one provider's usage object: the usage is of this shape
// when a key of mark is present; read and write are the paths of its
// counts of tokens read from and written to the cache (each write entry a
// sum of paths: Anthropic's 5m/1h split).
type usageShape struct {
	mark  []string
	read  [][]string
	write [][][]string
}

var usageShapes = []usageShape{
	{ // Anthropic Messages: usage.cache_read_input_tokens, cache_creation_input_tokens, cache_creation{5m, 1h}
		mark: []string{"cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation"},
		read: [][]string{{"cache_read_input_tokens"}},
		write: [][][]string{{{"cache_creation_input_tokens"}},
			{{"cache_creation", "ephemeral_5m_input_tokens"}, {"cache_creation", "ephemeral_1h_input_tokens"}}},
	},
	{ // OpenAI Chat Completions: usage.prompt_tokens_details
		mark:  []string{"prompt_tokens_details"},
		read:  [][]string{{"prompt_tokens_details", "cached_tokens"}},
		write: [][][]string{{{"prompt_tokens_details", "cache_write_tokens"}}},
	},
	{ // OpenAI Responses: usage.input_tokens_details
		mark:  []string{"input_tokens_details"},
		read:  [][]string{{"input_tokens_details", "cached_tokens"}},
		write: [][][]string{{{"input_tokens_details", "cache_write_tokens"}}},
	},
	{ // DeepSeek: usage.prompt_cache_hit_tokens, prompt_cache_miss_tokens (it records no writes)
		mark: []string{"prompt_cache_hit_tokens", "prompt_cache_miss_tokens"},
		read: [][]string{{"prompt_cache_hit_tokens"}},
	},
	{ // Bedrock Converse: usage.cacheReadInputTokens, cacheWriteInputTokens
		mark:  []string{"cacheReadInputTokens", "cacheWriteInputTokens"},
		read:  [][]string{{"cacheReadInputTokens"}},
		write: [][][]string{{{"cacheWriteInputTokens"}}},
	},
	{ // Gemini: usageMetadata.cachedContentTokenCount, left out when 0 (proto3 JSON), promptTokenCount always there
		mark: []string{"cachedContentTokenCount", "promptTokenCount"},
		read: [][]string{{"cachedContentTokenCount"}},
	},
}

// usageShapesRead names the shapes for the note of an unknown_usage.
const usageShapesRead = "the report reads Anthropic's cache_read_input_tokens and cache_creation_input_tokens, OpenAI's " +
	"prompt_tokens_details or input_tokens_details (cached_tokens, cache_write_tokens), DeepSeek's prompt_cache_hit_tokens, " +
	"Bedrock Converse's cacheReadInputTokens and cacheWriteInputTokens, Gemini's usageMetadata (cachedContentTokenCount); " +
	"this usage has none of them: give the provider's usage object, or its whole response, as it was recorded"

// The provider's miss reasons (Anthropic's cache_miss_reason.type) that
// say a part of the body changed; the first two are never in a prompt.
var missReasonsOutside = []string{"tools_changed", "model_changed"}
var missReasonsInside = []string{"system_changed", "messages_changed"}

// readUsageShapes reads the usage object m (msgpack, checked by
// checkUsageValue) at path base; whole is the response m came from, nil
// for a bare usage.
func readUsageShapes(m, whole []byte, base string) (usageRead, *Error) {
	var u usageRead
	top := usageFields(m, usageTopKeys)
	for i := range usageShapes {
		s := &usageShapes[i]
		if !hasAny(top, s.mark) {
			continue
		}
		u.known = true
		for _, p := range s.read {
			n, _, err := usageCount(top, p, base)
			if err != nil {
				return u, err
			}
			u.cached = max(u.cached, n)
		}
		for _, sum := range s.write {
			var total int64
			found := false
			for _, p := range sum {
				n, ok, err := usageCount(top, p, base)
				if err != nil {
					return u, err
				}
				total, found = total+n, found || ok
			}
			if found && (u.written == nil || total > *u.written) {
				u.written = &total
			}
		}
	}
	if d, ok := usageMap(whole, "diagnostics"); ok {
		if r, ok := usageMap(d, "cache_miss_reason"); ok {
			t, found := usageField(r, "type")
			if !found || msgp.NextType(t) != msgp.StrType {
				return u, newError(CodeMalformedRequest, ".diagnostics.cache_miss_reason.type",
					"expected the provider's miss reason ("+w().Str+"); give the provider's response as it was recorded")
			}
			reason, _, err := readStr(t)
			if err != nil {
				return u, err.within(".diagnostics.cache_miss_reason.type")
			}
			u.reason = reason
		}
	}
	return u, nil
}

// usageMap is the map under key in the map m (false: none, or not a map;
// m nil is no map).
func usageMap(m []byte, key string) ([]byte, bool) {
	if len(m) == 0 || msgp.NextType(m) != msgp.MapType {
		return nil, false
	}
	v, ok := usageField(m, key)
	return v, ok && msgp.NextType(v) == msgp.MapType
}

// usageTopKeys are the keys of a usage object the shapes read first: each
// shape's marking keys, which are also where its counts start.
var usageTopKeys = func() []string {
	var keys []string
	for _, s := range usageShapes {
		for _, k := range s.mark {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}()

// usageFields is the value of each of keys in the map at the start of b
// (checked by checkUsageValue; nil where it is not), the last one, as a
// decoded map holds it: one pass over the map, so that a usage object of
// millions of keys is read once, not once a key looked up.
func usageFields(b []byte, keys []string) [][]byte {
	vals := make([][]byte, len(keys))
	n, p, _ := readMapHeader(b)
	for range n {
		k, after, _ := readKey(p)
		next, _ := msgp.Skip(after)
		if i := slices.Index(keys, k); i >= 0 {
			vals[i] = after[:len(after)-len(next)]
		}
		p = next
	}
	return vals
}

// topField is the value of key (one of usageTopKeys) in the usage object
// whose usageFields are top.
func topField(top [][]byte, key string) ([]byte, bool) {
	v := top[slices.Index(usageTopKeys, key)]
	return v, v != nil
}

func hasAny(top [][]byte, keys []string) bool {
	for _, k := range keys {
		if v, ok := topField(top, k); ok && v[0] != 0xc0 {
			return true
		}
	}
	return false
}

// usageCount is the count of tokens at path in the usage object whose
// usageFields are top (false: none there).
func usageCount(top [][]byte, path []string, base string) (int64, bool, *Error) {
	x, found := topField(top, path[0])
	if !found {
		return 0, false, nil
	}
	at := base + fieldSeg(path[0])
	for _, k := range path[1:] {
		if msgp.NextType(x) != msgp.MapType { // a part that is not a map, or nil: nothing recorded there
			return 0, false, nil
		}
		if x, found = usageField(x, k); !found {
			return 0, false, nil
		}
		at += fieldSeg(k)
	}
	if x[0] == 0xc0 {
		return 0, false, nil
	}
	n, err := readTokenCount(x, at)
	if err != nil {
		return 0, false, err
	}
	return int64(n), true, nil
}

// classify is a call's usage class, from what was read of its usage (nil:
// none recorded).
func classify(c *CacheCall, u *usageRead) *CacheUsage {
	if u == nil {
		return &CacheUsage{Class: UsageNone}
	}
	cu := &CacheUsage{MissReason: u.reason}
	if cu.MissReason != "" {
		cu.MissReasonDisagrees = slices.Contains(missReasonsOutside, u.reason) || c.Break == nil && slices.Contains(missReasonsInside, u.reason)
	}
	if !u.known {
		cu.Class, cu.Note = UsageUnknown, usageShapesRead
		return cu
	}
	cu.CachedTokens, cu.WrittenTokens = u.cached, u.written
	switch {
	case c.Previous < 0:
		cu.Class = UsageFirst
	case u.cached > 0:
		cu.Class = UsageHit
	case c.Break != nil:
		cu.Class = UsagePrefixBreak
	case u.written != nil && *u.written > 0:
		cu.Class = UsageWriteOnly
	default:
		cu.Class = UsageProviderMiss
	}
	return cu
}
