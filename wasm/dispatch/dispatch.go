// Package dispatch holds the function behind each call of the module (the rows
// of abi.Calls): the module's call export (wasm/main.go) dispatches through
// Append, and the Go hosts run the same functions where they answer
// without the module (wasmhost for a request over the request limit, the
// command-line tool's native engine), so the answer is the same bytes
// either way. The functions sit above the core because three of them are
// the JSON layer's (wirejson); the contract's table, below the core, only
// numbers and describes them, and this package's test holds the two
// together: every row has its function, answering in the row's shapes.
package dispatch

import (
	"strconv"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// funcs is the function of each call, indexed by its op.
var funcs = [abi.NumCalls]func(dst, request []byte) []byte{
	abi.CallAssemble:         core.AppendAssembleBytes,
	abi.CallAssembleJSON:     wirejson.AppendAssemble,
	abi.CallAddStep:          core.AppendAddStepBytes,
	abi.CallAssembleView:     core.AppendAssembleViewBytes,
	abi.CallAssembleViewJSON: wirejson.AppendAssembleView,
	abi.CallPromptStart:      core.AppendPromptStartBytes,
	abi.CallCompare:          wirejson.AppendCompare,
	abi.CallBatch:            nil, // appendBatch, set by init: a batch runs the others through Append
	abi.CallError:            core.AppendErrorCallBytes,
	abi.CallAssembleShared:   core.AppendAssembleSharedBytes,
	abi.CallCacheReport:      wirejson.AppendCacheReport,
	abi.CallExport:           wirejson.AppendExport,
	abi.CallCacheCall:        wirejson.AppendCacheCall,
}

func init() { funcs[abi.CallBatch] = appendBatch }

func appendBatch(dst, request []byte) []byte { return core.AppendBatch(dst, request, Append) }

// MsgUnknownCall is the internal error's message of a call number past
// the table.
const MsgUnknownCall = "call: unknown call number (the module is older than the host)"

// Append appends the answer of call c to request, as the module answers it
// (abi.Calls has its shapes), and returns the extended slice; c's
// vocabulary bits (abi.WordsShift) choose the words of its messages. An
// unknown c is answered with an internal error (MsgUnknownCall) in the
// shape of assemble's answer.
func Append(c abi.Call, dst, request []byte) []byte {
	if v := c.Words(); v != 0 {
		if v >= len(abi.Vocabularies) || !core.SetWords(abi.Vocabularies[v].Name) {
			return core.AppendCallError(dst, c.Base(), "call: unknown vocabulary "+strconv.Itoa(v)+" (the module is older than the host)")
		}
		defer core.SetWords(abi.Vocabularies[0].Name)
		c = c.Base()
	}
	if c >= abi.NumCalls {
		return core.AppendCallError(dst, abi.CallAssemble, MsgUnknownCall)
	}
	return funcs[c](dst, request)
}
