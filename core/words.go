package core

import (
	"sync/atomic"

	"github.com/polyloop/assembly/core/abi"
)

// words is the vocabulary of the messages (abi.Words): the wire's unless
// SetWords chose another.
var words atomic.Pointer[abi.Words]

func init() { words.Store(&abi.Vocabularies[0]) }

// w is the vocabulary in use.
func w() *abi.Words { return words.Load() }

// SetWords makes the messages of this process use the vocabulary named
// name (abi.Vocabularies: "wire", "python"); false, and nothing changed, for
// an unknown name. The module sets it for one call, as the call's op asks
// (abi.WordsShift); a Go program that wants Python's words sets it once,
// before its first call.
func SetWords(name string) bool {
	for i := range abi.Vocabularies {
		if abi.Vocabularies[i].Name == name {
			words.Store(&abi.Vocabularies[i])
			return true
		}
	}
	return false
}
