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
		var extra, lenBytes int // fixed payload bytes; bytes of a length prefix
		var add, perLen int     // values added by a container; payload per unit of length
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c >= 0x80 && c <= 0x8f:
			pending += 2 * int(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			pending += int(c & 0x0f)
		case c >= 0xa0 && c <= 0xbf:
			extra = int(c & 0x1f)
		case c == 0xc4 || c == 0xd9: // bin8, str8
			lenBytes, perLen = 1, 1
		case c == 0xc5 || c == 0xda:
			lenBytes, perLen = 2, 1
		case c == 0xc6 || c == 0xdb:
			lenBytes, perLen = 4, 1
		case c == 0xc7: // ext8: len, type, data
			lenBytes, perLen, extra = 1, 1, 1
		case c == 0xc8:
			lenBytes, perLen, extra = 2, 1, 1
		case c == 0xc9:
			lenBytes, perLen, extra = 4, 1, 1
		case c == 0xca:
			extra = 4
		case c == 0xcb:
			extra = 8
		case c == 0xcc || c == 0xd0:
			extra = 1
		case c == 0xcd || c == 0xd1:
			extra = 2
		case c == 0xce || c == 0xd2:
			extra = 4
		case c == 0xcf || c == 0xd3:
			extra = 8
		case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16 (+ type byte)
			extra = 1 + 1<<(c-0xd4)
		case c == 0xdc:
			lenBytes, add = 2, 1
		case c == 0xdd:
			lenBytes, add = 4, 1
		case c == 0xde:
			lenBytes, add = 2, 2
		case c == 0xdf:
			lenBytes, add = 4, 2
		default: // 0xc1, never used: the value is this one byte; the core rejects it
		}
		var n uint64
		if lenBytes > 0 {
			var hdr [4]byte
			if k, err := io.ReadFull(r, hdr[:lenBytes]); err != nil {
				return append(dst, hdr[:k]...), ErrTruncated
			}
			dst = append(dst, hdr[:lenBytes]...)
			switch lenBytes {
			case 1:
				n = uint64(hdr[0])
			case 2:
				n = uint64(binary.BigEndian.Uint16(hdr[:]))
			case 4:
				n = uint64(binary.BigEndian.Uint32(hdr[:]))
			}
			pending += add * int(n)
		}
		total := int64(extra) + int64(perLen)*int64(n)
		if total > 0 {
			var err error
			dst, err = readN(r, dst, total)
			if err != nil {
				return dst, ErrTruncated
			}
		}
	}
	return dst, nil
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
