package wirejson_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/wirejson"
)

// streamValues is one msgpack value of every kind of header NextMsgpack
// reads: fixed, one-, two- and four-byte lengths, containers that add values.
func streamValues() [][]byte {
	one := func(f func([]byte) []byte) []byte { return f(nil) }
	var vs [][]byte
	for _, n := range []int64{0, 1, -1, -32, -33, 127, 128, -128, -129, 255, 256, 1 << 15, -1 << 15, 1 << 16, 1 << 31, -1 << 31, 1 << 32, -1 << 40} {
		vs = append(vs, msgp.AppendInt64(nil, n))
	}
	for _, n := range []uint64{200, 1 << 16, 1 << 33, 1<<64 - 1} {
		vs = append(vs, msgp.AppendUint64(nil, n))
	}
	vs = append(vs,
		one(msgp.AppendNil),
		msgp.AppendBool(nil, true), msgp.AppendBool(nil, false),
		msgp.AppendFloat32(nil, 1.5), msgp.AppendFloat64(nil, -2.25),
		[]byte{0xc1},
		[]byte{0xd4, 1, 'a'}, []byte{0xd5, 1, 'a', 'b'}, []byte{0xd8, 1, '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'},
		[]byte{0xc7, 2, 5, 'x', 'y'}, []byte{0xc8, 0, 1, 5, 'z'}, []byte{0xc9, 0, 0, 0, 0, 5},
	)
	for _, n := range []int{0, 31, 32, 255, 256, 70000} {
		vs = append(vs, msgp.AppendString(nil, string(bytes.Repeat([]byte{'s'}, n))))
		vs = append(vs, msgp.AppendBytes(nil, bytes.Repeat([]byte{'b'}, n)))
	}
	for _, n := range []uint32{0, 3, 15, 16, 70000} {
		a := msgp.AppendArrayHeader(nil, n)
		m := msgp.AppendMapHeader(nil, n)
		for i := uint32(0); i < n; i++ {
			a = msgp.AppendArrayHeader(a, 1)
			a = msgp.AppendString(a, "in")
			m = msgp.AppendString(m, "k")
			m = msgp.AppendMapHeader(m, 1)
			m = msgp.AppendInt(m, int(i))
			m = msgp.AppendBytes(m, []byte{1, 2})
		}
		vs = append(vs, a, m)
	}
	return vs
}

// TestNextMsgpackSplitsAStream: a stream of values comes back one value at a
// time, each the bytes msgp.Skip (the oracle) finds for it, then io.EOF.
func TestNextMsgpackSplitsAStream(t *testing.T) {
	vs := streamValues()
	stream := bytes.Join(vs, nil)
	r := bufio.NewReader(bytes.NewReader(stream))
	for i, want := range vs {
		got, err := wirejson.NextMsgpack(r, nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("value %d: got %d bytes, err %v; want %d bytes", i, len(got), err, len(want))
		}
		if want[0] == 0xc1 {
			continue // never used: one byte, which msgp.Skip refuses and the core rejects
		}
		if after, err := msgp.Skip(want); err != nil || len(after) != 0 {
			t.Fatalf("value %d is not one whole value for msgp.Skip: %v", i, err)
		}
	}
	if got, err := wirejson.NextMsgpack(r, []byte("kept")); err != io.EOF || string(got) != "kept" {
		t.Fatalf("at the end: %q, %v; want the dst unchanged and io.EOF", got, err)
	}
}

// TestNextMsgpackAcrossBufferEdges: the same split with every bufio size from
// the smallest (16) to past the longest header-and-payload run of the small
// values, and with a reader that gives one byte at a time, so every header and
// payload is cut by the buffer's edge somewhere (values whole in the buffer
// are taken in one span, the others header by header): each value is still
// the bytes msgp.Skip finds for it, with the value after it intact.
func TestNextMsgpackAcrossBufferEdges(t *testing.T) {
	vs := streamValues()
	stream := bytes.Join(vs, nil)
	var want [][]byte
	for rest := stream; len(rest) > 0; {
		after, err := msgp.Skip(rest)
		if err != nil { // 0xc1: one byte
			after = rest[1:]
		}
		want = append(want, rest[:len(rest)-len(after)])
		rest = after
	}
	check := func(name string, r *bufio.Reader) {
		t.Helper()
		for i, w := range want {
			got, err := wirejson.NextMsgpack(r, nil)
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("%s: value %d: got %d bytes, err %v; want %d bytes", name, i, len(got), err, len(w))
			}
		}
		if _, err := wirejson.NextMsgpack(r, nil); err != io.EOF {
			t.Fatalf("%s: at the end: %v, want io.EOF", name, err)
		}
	}
	for size := 16; size <= 96; size++ {
		check(fmt.Sprintf("buffer of %d", size), bufio.NewReaderSize(bytes.NewReader(stream), size))
		check(fmt.Sprintf("buffer of %d, one byte per read", size), bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(stream)), size))
	}
	check("one byte per read", bufio.NewReader(iotest.OneByteReader(bytes.NewReader(stream))))
}

// TestNextMsgpackTruncated: a value cut at any byte answers the bytes read so
// far (appended to dst) and ErrTruncated.
func TestNextMsgpackTruncated(t *testing.T) {
	for i, v := range streamValues() {
		cuts := []int{}
		for k := 1; k < len(v) && k < 40; k++ {
			cuts = append(cuts, k)
		}
		if len(v) > 40 {
			cuts = append(cuts, len(v)/2, len(v)-1)
		}
		for _, k := range cuts {
			got, err := wirejson.NextMsgpack(bufio.NewReader(bytes.NewReader(v[:k])), []byte{'>'})
			if !errors.Is(err, wirejson.ErrTruncated) || !bytes.Equal(got, append([]byte{'>'}, v[:k]...)) {
				t.Fatalf("value %d cut at %d of %d: got %d bytes, err %v", i, k, len(v), len(got), err)
			}
		}
	}
}

var errDisk = errors.New("read /dev/sdz: input/output error")

// TestNextMsgpackReadError: a read error before or inside a value is that
// error, not the end of the stream (ErrTruncated is only a real end).
func TestNextMsgpackReadError(t *testing.T) {
	if _, err := wirejson.NextMsgpack(bufio.NewReader(iotest.ErrReader(errDisk)), nil); !errors.Is(err, errDisk) {
		t.Fatalf("error at once: got %v, want %v", err, errDisk)
	}
	for i, v := range streamValues() {
		for _, k := range []int{len(v) / 2, len(v) - 1} {
			if k == 0 {
				continue
			}
			r := bufio.NewReader(io.MultiReader(bytes.NewReader(v[:k]), iotest.ErrReader(errDisk)))
			_, err := wirejson.NextMsgpack(r, nil)
			if !errors.Is(err, errDisk) {
				t.Fatalf("value %d, error after %d of %d bytes: got %v, want %v", i, k, len(v), err, errDisk)
			}
		}
	}
}

// TestNextMsgpackLimit: a value over the limit is skipped whole (the next
// value follows), not kept, with its length; one within it comes back as
// NextMsgpack gives it; cut short and over, the length is the bytes there
// were. The lengths are the values' own (built by msgp).
func TestNextMsgpackLimit(t *testing.T) {
	for _, size := range []int{16, 37, 4096} {
		testNextMsgpackLimit(t, size)
	}
}

// testNextMsgpackLimit is TestNextMsgpackLimit with a bufio buffer of size.
func testNextMsgpackLimit(t *testing.T, size int) {
	next := msgp.AppendString(nil, "next")
	for i, v := range streamValues() {
		for _, limit := range []int64{0, int64(len(v)) - 1, int64(len(v)), int64(len(v)) + 1} {
			r := bufio.NewReaderSize(bytes.NewReader(append(append([]byte{}, v...), next...)), size)
			got, n, err := wirejson.NextMsgpackLimit(r, []byte{'>'}, limit)
			switch {
			case n != int64(len(v)):
				t.Fatalf("buffer %d, value %d, limit %d: length %d, want %d", size, i, limit, n, len(v))
			case limit < int64(len(v)) && (!errors.Is(err, wirejson.ErrTooLarge) || string(got) != ">"):
				t.Fatalf("value %d of %d bytes, limit %d: got %d bytes, %v; want > and ErrTooLarge", i, len(v), limit, len(got), err)
			case limit >= int64(len(v)) && (err != nil || !bytes.Equal(got, append([]byte{'>'}, v...))):
				t.Fatalf("value %d of %d bytes, limit %d: got %d bytes, %v; want the value", i, len(v), limit, len(got), err)
			}
			if after, err := wirejson.NextMsgpack(r, nil); err != nil || !bytes.Equal(after, next) {
				t.Fatalf("value %d, limit %d: the value after it is %q, %v", i, limit, after, err)
			}
		}
		if len(v) > 2 {
			cut := v[:len(v)-1]
			_, n, err := wirejson.NextMsgpackLimit(bufio.NewReaderSize(bytes.NewReader(cut), size), nil, 1)
			if !errors.Is(err, wirejson.ErrTooLarge) || n != int64(len(cut)) {
				t.Fatalf("value %d cut at %d, limit 1: length %d, %v; want %d, ErrTooLarge", i, len(cut), n, err, len(cut))
			}
		}
	}
}
