package wirejson

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
)

// ErrTruncated reports a msgpack stream that ends inside a value.
var ErrTruncated = errors.New("the msgpack stream ends inside a value")

// ErrTooLarge reports a msgpack value longer than NextMsgpackLimit's limit;
// its bytes were read past, not kept.
var ErrTooLarge = errors.New("the msgpack value is over the limit")

// ErrEndless reports a msgpack value NextMsgpackBounded read no further than
// its ceiling: the stream is inside it, not at a next value.
var ErrEndless = errors.New("the msgpack value runs past the ceiling; it was read no further")

// NextMsgpack reads the bytes of the next whole msgpack value from r without
// interpreting them, appending them to dst. At the end of the stream it
// returns io.EOF with nothing appended. If the stream ends inside a value it
// returns the bytes read so far and ErrTruncated, so that the caller can still
// answer them (the core reports where they were cut). Any other read error
// is returned as it is, with the bytes read so far: it is not the stream's
// end, and no value is made of it.
func NextMsgpack(r *bufio.Reader, dst []byte) ([]byte, error) {
	b, _, err := NextMsgpackLimit(r, dst, math.MaxInt64)
	return b, err
}

// NextMsgpackLimit is NextMsgpack keeping at most limit bytes of a value.
// n is the value's length in bytes. A longer value is read to its end by its
// headers and not kept (memory stays bounded whatever its size): dst comes
// back as it was, with ErrTooLarge, and the stream is at the next value; if
// the stream ends inside it, n is the bytes there were (ErrTooLarge still).
func NextMsgpackLimit(r *bufio.Reader, dst []byte, limit int64) (b []byte, n int64, err error) {
	return NextMsgpackBounded(r, dst, limit, math.MaxInt64)
}

// NextMsgpackBounded is NextMsgpackLimit reading at most about ceiling bytes
// of a value over the limit (one more chunk of at most 1 MiB): past it, n
// is more than ceiling, the error ErrEndless, and the stream is left inside
// the value (one whose headers promise 2^62 values is not read for ever).
func NextMsgpackBounded(r *bufio.Reader, dst []byte, limit, ceiling int64) (b []byte, n int64, err error) {
	v := valueReader{r: r, dst: dst, start: len(dst), limit: limit, ceiling: ceiling}
	err = v.read()
	switch {
	case err == ErrEndless:
		v.dst = v.dst[:v.start]
	case err == nil && v.over:
		err = ErrTooLarge
	case err == io.EOF && v.n == 0:
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		err = ErrTruncated
		if v.over {
			err = ErrTooLarge
		}
	}
	return v.dst, v.n, err
}

// valueReader reads one msgpack value, keeping its bytes in dst while they
// are at most limit; over it (over), it reads on and keeps none.
type valueReader struct {
	r     *bufio.Reader
	dst   []byte
	start int   // where the value starts in dst
	n     int64 // bytes of the value read so far
	limit int64
	over  bool
	// ceiling: past it, read stops with ErrEndless
	ceiling int64
}

// read reads the value: each header says how many values and payload bytes
// follow (a container's members are values still to read).
func (v *valueReader) read() error {
	pending := int64(1) // values still to read
	for pending > 0 {
		if v.n > v.ceiling {
			return ErrEndless
		}
		// The whole headers and payloads already buffered are taken in one
		// span; a header or payload the buffer cuts goes the way below.
		if k := v.r.Buffered(); k > 0 {
			buf, _ := v.r.Peek(k)
			if used, left := scanBuffered(buf, pending); used > 0 {
				v.keep(buf[:used])
				_, _ = v.r.Discard(used) // buffered bytes: cannot fail
				pending = left
				continue
			}
		}
		c, err := v.r.ReadByte()
		if err != nil {
			return err
		}
		v.keep([]byte{c})
		pending--
		h := headOf(c)
		pending += int64(h.values)
		var n uint64
		if h.lenBytes > 0 {
			if n, err = v.length(h.lenBytes); err != nil {
				return err
			}
			// At most 2^33 per header: saturated long before it could wrap
			// (no stream holds 2^62 values).
			pending = min(pending+int64(h.add)*int64(n), 1<<62)
		}
		if total := int64(h.extra) + int64(h.perLen)*int64(n); total > 0 {
			if err = v.payload(total); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanBuffered walks the values of b while their headers and payloads are
// whole in it, with pending values still to read (as read counts them), and
// returns the bytes they take and the values still to read after them.
func scanBuffered(b []byte, pending int64) (used int, left int64) {
	i := 0
	for pending > 0 && i < len(b) {
		h := headOf(b[i])
		j := i + 1 + h.lenBytes
		if j > len(b) {
			break
		}
		var n uint64
		switch h.lenBytes {
		case 1:
			n = uint64(b[i+1])
		case 2:
			n = uint64(binary.BigEndian.Uint16(b[i+1:]))
		case 4:
			n = uint64(binary.BigEndian.Uint32(b[i+1:]))
		}
		total := uint64(h.extra) + uint64(h.perLen)*n
		if total > uint64(len(b)-j) {
			break
		}
		pending += int64(h.values) - 1
		if h.lenBytes > 0 {
			pending = min(pending+int64(h.add)*int64(n), 1<<62)
		}
		i = j + int(total)
	}
	return i, pending
}

// keep counts b and appends it to dst while the value is within the limit.
func (v *valueReader) keep(b []byte) {
	v.n += int64(len(b))
	if v.over {
		return
	}
	if v.n > v.limit {
		v.over, v.dst = true, v.dst[:v.start]
		return
	}
	v.dst = append(v.dst, b...)
}

// length reads a big-endian length prefix of size bytes (1, 2 or 4); cut
// short, it keeps the bytes it got.
func (v *valueReader) length(size int) (uint64, error) {
	var hdr [4]byte
	k, err := io.ReadFull(v.r, hdr[:size])
	v.keep(hdr[:k])
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(hdr[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(hdr[:])), nil
	}
	return uint64(binary.BigEndian.Uint32(hdr[:])), nil
}

// payload reads n bytes of payload, in chunks of at most 1 MiB: into dst
// while within the limit, discarded past it.
func (v *valueReader) payload(n int64) error {
	for n > 0 {
		chunk := min(n, 1<<20)
		if room := v.limit - v.n; !v.over && room > 0 {
			k := int(min(chunk, room))
			start := len(v.dst)
			v.dst = slices.Grow(v.dst, k)[:start+k] // no zeroed temporary to copy
			got, err := io.ReadFull(v.r, v.dst[start:])
			v.dst, v.n = v.dst[:start+got], v.n+int64(got)
			if err != nil {
				return err
			}
			n, chunk = n-int64(k), chunk-int64(k)
		}
		if chunk > 0 { // past the limit
			if v.n > v.ceiling {
				return ErrEndless
			}
			v.over, v.dst = true, v.dst[:v.start]
			got, err := v.r.Discard(int(chunk))
			v.n += int64(got)
			if err != nil {
				return err
			}
			n -= chunk
		}
	}
	return nil
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
