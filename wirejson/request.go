package wirejson

import (
	"errors"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/msgfmt"
)

// Request converts the JSON text of one request to the msgpack request that
// says the same thing, appending to dst. A JSON syntax error is returned as
// the wire error every host gives for it: malformed_request at the whole
// request, with the byte offset in the message. This is the one place JSON
// text is judged: the command-line tool and the module's assemble_json export
// both call it, so the preview and the CLI give JSON text one verdict. A text
// over 4 GiB − 1 bytes is too_large at "", with the message every host and
// binding gives a request of its size (core.MsgRequestTooLargeFormat).
func Request(dst, text []byte) ([]byte, *core.Error) {
	mp, e, _ := request(dst, text)
	return mp, e
}

// request is Request, with the byte of a JSON syntax error (-1 for none).
func request(dst, text []byte) ([]byte, *core.Error, int) {
	mp, err := ToMsgpack(dst, text)
	if errors.Is(err, ErrTextTooLarge) {
		return nil, &core.Error{Code: core.CodeTooLarge, Message: msgfmt.Sprintf(core.MsgRequestTooLargeFormat, len(text)), Offset: -1}, -1
	}
	if err != nil {
		at, msg := -1, err.Error()+"; send one JSON object per request"
		var se *SyntaxError
		if errors.As(err, &se) {
			at = se.Offset
			if se.Said {
				msg = err.Error()
			}
		}
		return nil, &core.Error{Code: core.CodeMalformedRequest, Message: msg, Offset: -1}, at
	}
	return mp, nil, -1
}

// AppendAssemble answers the JSON text of one request with the canonical
// msgpack response, appending to dst: core.AppendAssembleBytes of the
// converted request, or the error response of a JSON syntax error.
func AppendAssemble(dst, text []byte) []byte {
	mp, e := Request(nil, text)
	if e != nil {
		return append(dst, core.ErrorResponse(e)...)
	}
	return core.AppendAssembleBytes(dst, mp)
}

// AppendAssembleView is AppendAssemble answered as the module's
// assemble_view_json export: core.AppendAssembleViewBytes of the converted
// request, or the view answer of a JSON syntax error (docs/SPEC.md §7.8).
func AppendAssembleView(dst, text []byte) []byte {
	mp, e, at := request(nil, text)
	if e != nil {
		return core.AppendErrorView(dst, e, at) // the syntax error's byte, from the one read
	}
	return core.AppendAssembleViewBytes(dst, mp)
}

// AppendCompare answers a compare request (docs/SPEC.md §7.9) as the
// module's compare export: core.AppendCompareBytes, a side written as JSON
// text judged by Request, as assemble_json judges a request.
func AppendCompare(dst, request []byte) []byte {
	return core.AppendCompareBytes(dst, request, func(text []byte) ([]byte, *core.Error) { return Request(nil, text) })
}
