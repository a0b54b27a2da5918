// Package abi is the host contract of the assembly module in one place:
// every call the module's call export answers (Calls: its name, op number,
// the shapes of its request and answer, its parameters and its doc), the limits and message texts every host uses, the code points a
// view marks (InvisibleRanges), and the layout and seal of the compiled-
// module cache. The module (wasm/), the Go hosts (wasmhost, internal/engine),
// the command-line tool and tools/genconsts, which writes it into the Python
// and JavaScript bindings (`go generate ./...`), all read it from here.
//
// It is data and imports nothing, so it stands at the bottom: the core
// imports it (core.MaxRequestBytes is MaxRequestBytes) and the module links
// it at the cost of its strings. The wire format's own vocabulary (the
// version, the error codes, the ext type of an unreadable value) is the
// core's, beside the codec that reads and writes it.
//
// A message format (Msg*Format) has only the verbs %d (an integer) and %s (a
// string), one per argument in order, and %% for a percent sign: Go's
// fmt.Sprintf and core/msgfmt, Python's % operator and the generated
// JavaScript function all give the same text.
package abi

// Call numbers one of the module's calls: the op argument of its call export
// (wasm/README.md, "ABI"). The order is fixed; a new call is added at the
// end, before NumCalls.
type Call uint32

// The calls, in op order: the rows of Calls.
const (
	CallAssemble Call = iota
	CallAssembleJSON
	CallAddStep
	CallAssembleView
	CallAssembleViewJSON
	CallPromptStart
	CallCompare
	CallBatch
	CallError
	CallAssembleShared
	CallCacheReport
	CallExport
	CallCacheCall
	NumCalls // the number of calls
)

// Arg is the shape of a call's request bytes.
type Arg uint8

// The request shapes.
const (
	ArgRequest Arg = iota // a msgpack request (docs/SPEC.md §2)
	ArgJSON               // a request as JSON text, UTF-8 (docs/SPEC.md §2.3)
	ArgAddStep            // a msgpack add_step request (docs/SPEC.md §7.3.1)
	ArgCompare            // a msgpack compare request, a map {a, b} (docs/SPEC.md §7.9)
	ArgBatch              // batch items: op and size (u32 little-endian each), then size bytes of request
	ArgArgs               // a msgpack map of the call's arguments, keyed by its Params
	NumArgs               // the number of request shapes
)

// Answer is the shape of a call's answer, ok or not: an error is answered
// in the shape of its call (core.AppendErrorAnswer).
type Answer uint8

// The answer shapes.
const (
	AnswerResponse    Answer = iota // a wire response (docs/SPEC.md §3, §6), a msgpack map
	AnswerPromptStart               // a wire response with, when ok, the prompt's state under prompt (docs/SPEC.md §7.3.1)
	AnswerStep                      // an add_step response (docs/SPEC.md §7.3.1); an error is a wire response
	AnswerView                      // the response's length (u32 little-endian), the response, the view as JSON text or null (docs/SPEC.md §7.8)
	AnswerJSON                      // JSON text: the comparison, or {"error": {code, message, path}} (docs/SPEC.md §7.9)
	AnswerBatch                     // item by item, the length of its answer (u32 little-endian) and the answer
	AnswerNamed                     // an error answer in the shape of the call named by the request's call argument
	AnswerShared                    // a wire response whose texts may be the request's own, by number (docs/SPEC.md §7.11)
	AnswerMap                       // a msgpack map: the answer, or {"error": {code, message, path}} (docs/SPEC.md §7.13)
	NumAnswers                      // the number of answer shapes
)

// Spec is one call of the module: a row of Calls.
type Spec struct {
	Name   string // the call's name: the words of the docs and the messages; CALL_<NAME> in the bindings
	Op     Call   // its op number, its index in Calls
	Arg    Arg    // what its request is
	Answer Answer // what it answers
	// Params names the arguments of a call whose request is a map of them
	// (ArgCompare, ArgArgs), in the order a host's facade takes them: a
	// host's generic call packs {Params[i]: args[i]} with its codec. Nil
	// where the request is one value (the request itself).
	Params []string
	Doc    string // what it does, one sentence
}

// Calls is every call the module answers, indexed by its op.
var Calls = [NumCalls]Spec{
	{"assemble", CallAssemble, ArgRequest, AnswerResponse, nil,
		"Assembles a msgpack request: the wire response."},
	{"assemble_json", CallAssembleJSON, ArgJSON, AnswerResponse, nil,
		"Assembles a request written as JSON text, with the JSON verdict of every host and the command-line tool: the wire response."},
	{"add_step", CallAddStep, ArgAddStep, AnswerStep, nil,
		"Appends one step to an incremental prompt the host describes by its template, budget and state: the new messages and state."},
	{"assemble_view", CallAssembleView, ArgRequest, AnswerView, nil,
		"Assembles a msgpack request for a host that shows the prompt: the response and its view."},
	{"assemble_view_json", CallAssembleViewJSON, ArgJSON, AnswerView, nil,
		"assemble_view of a request written as JSON text, judged as assemble_json judges it."},
	{"prompt_start", CallPromptStart, ArgRequest, AnswerPromptStart, nil,
		"Starts an incremental prompt: the assemble response with the state add_step continues from."},
	{"compare", CallCompare, ArgCompare, AnswerJSON, []string{"a", "b"},
		"Compares two prompts, each a request, a recorded message list or either as JSON text: the comparison as JSON text."},
	{"batch", CallBatch, ArgBatch, AnswerBatch, nil,
		"Runs several calls in one crossing: each item's answer, exactly what its call answers alone."},
	{"error", CallError, ArgArgs, AnswerNamed, ErrorParams,
		"Answers an error only the host saw (a request it will not copy in, a failed instance, a response string its engine cannot make), in the shape of the call it names: the host packs no error and writes no path."},

	{"assemble_shared", CallAssembleShared, ArgRequest, AnswerShared, nil,
		"assemble, answering a text the host already holds by its number among the request's texts, so a host decodes only new text: the response with its texts shared."},
	{"cache_report", CallCacheReport, ArgArgs, AnswerJSON, []string{"requests", "usage"},
		"Reports on the calls of a run in order: for each, whether its prompt extends the previous call's, the first break and its cause, the cacheable prefix, and with recorded provider usage its class; the shared prefixes and totals (docs/SPEC.md §7.12, in the source repository)."},
	{"export", CallExport, ArgArgs, AnswerMap, []string{"request", "provider", "options"},
		"The provider's request body for a request's prompt (anthropic, openai-chat, openai-responses), every text untouched, with cache breakpoints or cache key placed by the prompt's segments (docs/SPEC.md §7.13, in the source repository)."},
	{"cache_call", CallCacheCall, ArgArgs, AnswerJSON, []string{"run", "prompt", "previous", "usage"},
		"Reports on the next call of a run as the loop makes it: the call's entry of the cache report and the run's state, in O(new) for a prompt that extends the previous one (docs/SPEC.md §7.15, in the source repository)."},
}

// ErrorParams are the arguments of the error call (docs/SPEC.md §7.10):
// the op number of the call whose answer to make, the error (one of
// HostErrors), and what that error needs: a size in bytes, a position in
// the answer (an array of map keys and indexes), the number of messages
// before an add_step answer's own, the host's name of a value's type.
var ErrorParams = []string{"call", "error", "size", "path", "message_base", "type_name"}

// HostErrors are the errors a host asks the error call for: each names
// one of the messages in host.go.
var HostErrors = []string{"too_large", "value_too_large", "trapped", "out_of_memory", "not_a_response", "string_ceiling"}

// WordsShift places a vocabulary in an op number: the bits from it up
// select the words of the call's messages (Vocabularies[op >> WordsShift];
// 0, the wire's, by default), the bits below it the call. A Python host
// asks for Python's words on the calls whose errors it raises, and the
// wire's on those whose bytes it returns, which are then every host's.
const WordsShift = 8

// Base is c without its vocabulary bits.
func (c Call) Base() Call { return c & (1<<WordsShift - 1) }

// Words is the index in Vocabularies that c's vocabulary bits select.
func (c Call) Words() int { return int(c >> WordsShift) }

// Name is the call's name (Calls), "call" for a number past the table.
func (c Call) Name() string {
	if c = c.Base(); c >= NumCalls {
		return "call"
	}
	return Calls[c].Name
}

// String names the request shape, as the generated CALLS tables do.
func (a Arg) String() string {
	return [NumArgs]string{"request", "json", "add_step", "compare", "batch", "args"}[a]
}

// String names the answer shape, as the generated CALLS tables do.
func (a Answer) String() string {
	return [NumAnswers]string{"response", "prompt_start", "step", "view", "json", "batch", "named", "shared", "map"}[a]
}
