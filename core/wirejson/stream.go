package wirejson

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"slices"
)

// ErrTruncated reports a msgpack stream that ends inside a value.
var ErrTruncated = errors.New("the msgpack stream ends inside a value")

// NextMsgpack reads the bytes of the next whole msgpack value from r without
// interpreting them, appending them to dst. At the end of the stream it
// returns io.EOF with nothing appended. If the stream ends inside a value it
// returns the bytes read so far and ErrTruncated, so that the caller can still
// answer them (the core reports where they were cut).
func NextMsgpack(r *bufio.Reader, dst []byte) ([]byte, error) {
	pending := 1 // values still to read
	first := true
	for pending > 0 {
		c, err := r.ReadByte()
		if err != nil {
			if first && err == io.EOF {
				return dst, io.EOF
			}
			return dst, ErrTruncated
		}
		first = false
		dst = append(dst, c)
		pending--
		h := headOf(c)
		pending += h.values
		var n uint64
		if h.lenBytes > 0 {
			if dst, n, err = readLength(r, dst, h.lenBytes); err != nil {
				return dst, ErrTruncated
			}
			pending += h.add * int(n)
		}
		total := int64(h.extra) + int64(h.perLen)*int64(n)
		if total > 0 {
			if dst, err = readN(r, dst, total); err != nil {
				return dst, ErrTruncated
			}
		}
	}
	return dst, nil
}

// head is what the first byte of a msgpack value says about the rest of it.
type head struct {
	values   int // values added by a fixmap or a fixarray
	extra    int // fixed payload bytes
	lenBytes int // bytes of a length prefix
	add      int // values added per unit of length (array 1, map 2)
	perLen   int // payload bytes per unit of length (str, bin, ext)
}

// headOf reads the first byte c of a msgpack value.
func headOf(c byte) head {
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
	case c >= 0x80 && c <= 0x8f:
		return head{values: 2 * int(c&0x0f)}
	case c >= 0x90 && c <= 0x9f:
		return head{values: int(c & 0x0f)}
	case c >= 0xa0 && c <= 0xbf:
		return head{extra: int(c & 0x1f)}
	case c == 0xc4 || c == 0xd9: // bin8, str8
		return head{lenBytes: 1, perLen: 1}
	case c == 0xc5 || c == 0xda:
		return head{lenBytes: 2, perLen: 1}
	case c == 0xc6 || c == 0xdb:
		return head{lenBytes: 4, perLen: 1}
	case c == 0xc7: // ext8: len, type, data
		return head{lenBytes: 1, perLen: 1, extra: 1}
	case c == 0xc8:
		return head{lenBytes: 2, perLen: 1, extra: 1}
	case c == 0xc9:
		return head{lenBytes: 4, perLen: 1, extra: 1}
	case c == 0xca:
		return head{extra: 4}
	case c == 0xcb:
		return head{extra: 8}
	case c == 0xcc || c == 0xd0:
		return head{extra: 1}
	case c == 0xcd || c == 0xd1:
		return head{extra: 2}
	case c == 0xce || c == 0xd2:
		return head{extra: 4}
	case c == 0xcf || c == 0xd3:
		return head{extra: 8}
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16 (+ type byte)
		return head{extra: 1 + 1<<(c-0xd4)}
	case c == 0xdc:
		return head{lenBytes: 2, add: 1}
	case c == 0xdd:
		return head{lenBytes: 4, add: 1}
	case c == 0xde:
		return head{lenBytes: 2, add: 2}
	case c == 0xdf:
		return head{lenBytes: 4, add: 2}
	default: // 0xc1, never used: the value is this one byte; the core rejects it
	}
	return head{}
}

// readLength reads a big-endian length prefix of size bytes (1, 2 or 4),
// appending it to dst; cut short, it appends the bytes it got.
func readLength(r *bufio.Reader, dst []byte, size int) ([]byte, uint64, error) {
	var hdr [4]byte
	if k, err := io.ReadFull(r, hdr[:size]); err != nil {
		return append(dst, hdr[:k]...), 0, err
	}
	dst = append(dst, hdr[:size]...)
	switch size {
	case 1:
		return dst, uint64(hdr[0]), nil
	case 2:
		return dst, uint64(binary.BigEndian.Uint16(hdr[:])), nil
	}
	return dst, uint64(binary.BigEndian.Uint32(hdr[:])), nil
}

func readN(r *bufio.Reader, dst []byte, n int64) ([]byte, error) {
	for n > 0 {
		chunk := int(min(n, 1<<20))
		start := len(dst)
		dst = slices.Grow(dst, chunk)[:start+chunk] // no zeroed temporary to copy
		got, err := io.ReadFull(r, dst[start:])
		dst = dst[:start+got]
		if err != nil {
			return dst, err
		}
		n -= int64(chunk)
	}
	return dst, nil
}
