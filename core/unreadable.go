package core

import (
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/core/jsonstr"
	"github.com/polyloop/assembly/core/msgfmt"
	"github.com/polyloop/assembly/core/msgp"
)

// A host that cannot read one of its own request values (a user's mapping
// whose items() raised, a getter that threw) writes, in that value's place,
// an ext value of type ExtUnreadable whose data is a msgpack array of three
// str: the value's type, the error's type and the error's text, as the host
// names them. The core answers malformed_request at that value's path with
// abi.MsgUnreadableValueFormat (docs/SPEC.md §7.6): the binding computes no path
// and writes no message, and the first problem of the request still wins.
// Each of the three texts is quoted as an excerpt (jsonstr.Excerpt).
const ExtUnreadable = 1

// unreadableError is the error of an ExtUnreadable value at the start of b,
// or nil when b starts with anything else (or a malformed one, which is then
// reported as any ext value is).
func unreadableError(b []byte) *Error {
	typ, data, ok := extOf(b)
	if !ok || typ != ExtUnreadable {
		return nil
	}
	n, data, err := msgp.ReadArrayHeaderBytes(data)
	if err != nil || n != 3 {
		return nil
	}
	var parts [3]string
	for i := range parts {
		if parts[i], data, err = msgp.ReadStringBytes(data); err != nil {
			return nil
		}
		parts[i] = jsonstr.Excerpt(parts[i])
	}
	if len(data) != 0 {
		return nil
	}
	return newError(CodeMalformedRequest, "", msgfmt.Sprintf(abi.MsgUnreadableValueFormat, parts[0], parts[1], parts[2]))
}

// extOf splits the ext value at the start of b into its type and data.
func extOf(b []byte) (typ int8, data []byte, ok bool) {
	if len(b) < 2 {
		return 0, nil, false
	}
	var n, h int
	switch b[0] {
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
		n, h = 1<<(b[0]-0xd4), 1
	case 0xc7: // ext 8
		n, h = int(b[1]), 2
	case 0xc8: // ext 16
		if len(b) < 3 {
			return 0, nil, false
		}
		n, h = int(b[1])<<8|int(b[2]), 3
	case 0xc9: // ext 32
		if len(b) < 5 {
			return 0, nil, false
		}
		n, h = int(b[1])<<24|int(b[2])<<16|int(b[3])<<8|int(b[4]), 5
	default:
		return 0, nil, false
	}
	if len(b) < h+1+n {
		return 0, nil, false
	}
	return int8(b[h]), b[h+1 : h+1+n], true
}
