// Package core is the polyloop context-assembly engine: one pure function that
// turns run messages, injected entries, goal messages and step history into the
// message list an agent loop sends to a model.
//
// The library owns the order of the segments, the position of the injection
// slot, the message boundaries and the size measure (Unicode code points). It
// never writes text of its own. The observation template is rendered exactly as
// CPython's str.format(observation=...) would render it.
//
// There are three entry points:
//
//   - [Assemble] takes a typed [Request] and returns a [Response] or an [*Error].
//   - [AssembleBytes] is the wire function: a msgpack request in, a canonical
//     msgpack response (ok or error) out. It never panics and never prints.
//     Every host (native Go, wazero, wasmtime, Python, JavaScript) runs it.
//   - [ValidateTemplate] checks an observation template before a run starts.
//
// [NewPrompt] offers the incremental form for agent loops that add one step at
// a time.
//
// The wire format is version 1 of docs/SPEC.md; see README.md and RATIONALE.md.
package core

import "github.com/polyloop/assembly/core/abi"

// WireVersion is the only wire version this package speaks.
const WireVersion = 1

// The limits and message texts of the host contract are package abi's
// (core/abi: the one table of what a host must know); the core names those
// its Go callers use.
const (
	// MaxRequestBytes is the largest request AssembleBytes decodes; a larger
	// one is answered with CodeTooLarge (MsgRequestTooLargeFormat) before
	// decoding.
	MaxRequestBytes = abi.MaxRequestBytes
	// MsgRequestTooLargeFormat is the too_large message of a request of %d
	// bytes over MaxRequestBytes (path "").
	MsgRequestTooLargeFormat = abi.MsgRequestTooLargeFormat
	// MaxMsgpackLength is the most bytes (or entries) one msgpack str, bin,
	// array or map can hold: 2^32 − 1.
	MaxMsgpackLength = abi.MaxMsgpackLength
	// MaxValueDepth is how deep a value the core passes through may nest.
	MaxValueDepth = abi.MaxValueDepth
)

// Roles accepted in a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// BlockTypeText is the only block type of wire version 1.
const BlockTypeText = "text"

// Block is one piece of message content. Only text blocks exist today.
type Block struct {
	Type string // always BlockTypeText in wire version 1
	Text string
}

// Message is one chat message: a role and its content blocks.
type Message struct {
	Role    string // RoleSystem, RoleUser or RoleAssistant
	Content []Block
}

// Injection is one entry pasted into the injection slot.
type Injection struct {
	EntryID string // non-empty identifier recorded in the trajectory
	Content string // the text pasted, as given
}

// Step is one completed step of the loop.
type Step struct {
	RawOutput   string // the text the decision interpreter hands back, pasted as given
	Observation string // rendered through the observation template
}

// Request is the input of Assemble. The zero values of the optional fields are
// the wire defaults.
type Request struct {
	RunMessages  []Message
	Injections   map[string][]Injection // channel name -> entries
	GoalMessages []Message
	Steps        []Step
	// ObservationTemplate is a CPython str.format template with at least one
	// {observation} field; see ValidateTemplate.
	ObservationTemplate string
	// MaxPromptChars is the budget in code points; nil means no budget.
	MaxPromptChars *int64
}

// Injected records one message pasted by the injection slot.
type Injected struct {
	Channel      string
	EntryID      string
	MessageIndex int
}

// PrefixDigests are lowercase hex SHA-256 digests of the canonical msgpack
// encoding of the message array up to the end of each segment. Equal digests
// mean an identical cacheable prefix.
type PrefixDigests struct {
	Run        string
	Injections string
	Goal       string
}

// Response is the result of a successful Assemble.
type Response struct {
	Messages        []Message
	MessageChars    []int64 // code points of each message, parallel to Messages
	PromptChars     int64   // sum of MessageChars
	ContextOverflow bool    // a budget was given and PromptChars exceeds it
	Injected        []Injected
	PrefixDigests   PrefixDigests
}

// DecodeRequest decodes a wire request strictly, as AssembleBytes does,
// without assembling it. The returned strings do not alias b.
func DecodeRequest(b []byte) (*Request, error) {
	// A fresh scratch, never pooled: the request lives in it.
	sc := new(scratch)
	req, _, err := decodeRequest(append([]byte(nil), b...), sc)
	if err != nil {
		return nil, err
	}
	req.Injections = sc.injections()
	return req, nil
}
