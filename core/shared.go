package core

import (
	"slices"

	"github.com/polyloop/assembly/core/abi"
)

// Shared texts (docs/SPEC.md §7.11): the answer of the assemble_shared call
// is the assemble response in which a text the host already holds is not
// sent back. A message's text value is then one of
//
//   - a str: new text;
//   - an ext value of type ExtRequestText whose 4 data bytes are k
//     (big-endian): the request's text k, byte for byte;
//   - an array of at least two pieces, each a str or such an ext value: a
//     rendering, the pieces joined (a template whose every field is a bare
//     {observation}: its literal text and the observation).
//
// The request's texts are numbered in one order, whatever the order of
// the request map's keys: the texts of run_messages' blocks (message by
// message, block by block), the contents of the injections' entries
// (channel by channel in the request's order, entry by entry), the texts
// of goal_messages' blocks, then each step's raw_output and observation.
// A host numbers its own strings the same way and decodes only new text.
// Everything else in the answer (keys, counts, digests, an error) is the
// assemble response's, which the answer's verdicts (too_large included)
// always are.

// ExtRequestText is the msgpack ext type of a shared text: "the request's
// text k" (abi.ExtRequestText, which the hosts are generated from).
const ExtRequestText = abi.ExtRequestText

// sharedRefSize is the encoded size of a shared text: fixext 4.
const sharedRefSize = 6

// AppendAssembleSharedBytes is the module's assemble_shared call: the
// assemble response of request, its texts shared (above), appended to dst.
func AppendAssembleSharedBytes(dst, request []byte) []byte {
	return runWire(dst, request, func(sc *scratch) ([]byte, *Error) {
		_, a, size, err := planRequest(request, sc)
		if err != nil {
			return nil, err
		}
		// A shared text is at most sharedRefSize bytes where the text took
		// one, and a rendering adds an array header and its pieces.
		dst = slices.Grow(dst, size+len(a.msgs)*(sharedRefSize+5)+a.pieces()*len(a.msgs))
		return a.appendShared(dst), nil
	})
}

// pieces is the most pieces a rendering is shared as.
func (a *assembly) pieces() int {
	if t := a.tmpl; t != nil && t.plain {
		return 2*len(t.fields) + 1
	}
	return 0
}

// appendShared writes the ok response with its texts shared.
func (a *assembly) appendShared(out []byte) []byte {
	a.emptyObs = span{}
	// The digests are of the canonical encoding, written to a buffer the
	// pooled scratch keeps (a large one is let go).
	enc, ends := a.appendMessages(a.enc[:0], a.msgs[:a.goalEnd])
	a.digests = prefixDigests(enc, ends, a.segments())
	if a.enc = enc; cap(enc) > 1<<20 {
		a.enc = nil
	}
	out = appendHead(out, 8, true)
	out = append(out, keyMessages...)
	out = appendArrayHeader(out, len(a.msgs))
	for i := range a.msgs {
		out = a.appendSharedMessage(out, &a.msgs[i])
	}
	out = a.appendTail(out)
	return appendDigests(out, a.digests)
}

func (a *assembly) appendSharedMessage(dst []byte, m *outMsg) []byte {
	switch m.kind {
	case kCopy:
		dst = append(dst, msgHead...)
		dst = appendStr(dst, m.role)
		dst = append(dst, keyContent...)
		dst = appendArrayHeader(dst, len(m.blocks))
		for j, b := range m.blocks {
			dst = append(dst, blockHead...)
			dst = appendStr(dst, b.Type)
			dst = append(dst, keyText...)
			dst = appendRef(dst, m.k+j)
		}
		return dst
	case kText:
		return appendRef(append(dst, textHead(m.role)...), m.k)
	}
	dst = append(dst, textHead(m.role)...)
	t := a.tmpl
	if !t.plain {
		dst = appendStrHeader(dst, m.nbytes)
		return t.AppendRender(dst, m.text)
	}
	n := 0
	for i := range t.fields {
		if t.fields[i].lit != "" {
			n++
		}
		n++
	}
	if t.tail != "" {
		n++
	}
	switch {
	case n == 0: // every field renders nothing
		return appendStr(dst, "")
	case n > 1:
		dst = appendArrayHeader(dst, n)
	}
	for i := range t.fields {
		if lit := t.fields[i].lit; lit != "" {
			dst = appendStr(dst, lit)
		}
		dst = appendRef(dst, m.k)
	}
	if t.tail != "" {
		dst = appendStr(dst, t.tail)
	}
	return dst
}

// appendRef writes the shared text k.
func appendRef(dst []byte, k int) []byte {
	return append(dst, 0xd6, ExtRequestText, byte(k>>24), byte(k>>16), byte(k>>8), byte(k))
}
