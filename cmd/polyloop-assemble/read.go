package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// requestLimit is the most bytes of one request the tool reads into memory
// (docs/SPEC.md §4): a longer request, JSON text or msgpack, is read past,
// not kept, and answered too_large with its size, so memory stays bounded
// whatever the input. Only tests lower it.
var requestLimit int64 = core.MaxRequestBytes

// readCeiling is the most bytes the tool reads of one input over the
// request limit to learn its size (4 GiB): past it, that input is not read
// on, so an endless one (/dev/zero) gets its verdict too, its size quoted
// as "more than readCeiling bytes" (sizeOf). Only tests lower it.
var readCeiling int64 = 4 * core.MaxRequestBytes

// msgRequestEndlessFormat is core.MsgRequestTooLargeFormat for a request
// read past readCeiling, whose end was not reached.
const msgRequestEndlessFormat = "the request is more than %d bytes (read no further), over the 1 GiB limit; split it into smaller requests"

// sizeUnknown is the size of an input read no further than readCeiling: its
// size is not known, only that it is more (a file's size, from stat, is
// quoted as it is).
const sizeUnknown = math.MaxInt64

// sizeOf is how a message quotes an input of size bytes over the limit:
// "N bytes", or "more than N bytes" for one read no further (sizeUnknown).
func sizeOf(size int64) string {
	if size == sizeUnknown {
		return fmt.Sprintf("more than %d bytes (read no further)", readCeiling)
	}
	return fmt.Sprintf("%d bytes", size)
}

// tooLargeAnswer is call c's too_large answer to a request of size bytes
// it was not given (core.AppendRequestTooLarge, or past readCeiling).
func tooLargeAnswer(c abi.Call, size int64) []byte {
	return core.AppendErrorAnswer(nil, c, tooLargeRequest(size))
}

// readRequest reads the whole input as one request. Within limit it
// returns its bytes and n = len(b). Over it, b is nil and n the input's
// size: the file's size, or the bytes read to the end, counted and dropped
// (more than readCeiling: the input was read no further).
func readRequest(r io.Reader, size, limit int64) (b []byte, n int64, err error) {
	if size > limit { // a regular file: its size is known
		return nil, size, nil
	}
	b, err = readAll(io.LimitReader(r, limit+1), size)
	if err != nil || int64(len(b)) <= limit {
		return b, int64(len(b)), err
	}
	rest, err := io.Copy(io.Discard, io.LimitReader(r, max(readCeiling-int64(len(b)), 0)+1))
	if n = int64(len(b)) + rest; n > readCeiling {
		n = sizeUnknown
	}
	return nil, n, err
}

// readLine reads the next line of a JSON batch into dst, without its
// newline; n is its length. A line over limit is read to its end but only
// its first bytes are kept (the caller drops them). err is io.EOF when the
// line ends the input without a newline, or when nothing was left (n 0),
// or when the line runs past readCeiling: it is read no further, and the
// input is not read on (an sizeUnknown line, /dev/zero, ends there).
func readLine(r *bufio.Reader, dst []byte, limit int64) (line []byte, n int64, err error) {
	for {
		var part []byte
		part, err = r.ReadSlice('\n')
		n += int64(len(part))
		if n <= limit+1 { // +1: the newline
			dst = append(dst, part...)
		}
		if err == bufio.ErrBufferFull && n > readCeiling {
			return dst, sizeUnknown, io.EOF
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if bytes.HasSuffix(dst, []byte("\n")) && n <= limit+1 {
		dst, n = dst[:len(dst)-1], n-1
	} else if err == nil { // over the limit: the newline was not kept
		n--
	}
	return dst, n, err
}

// readAll reads r to its end into one buffer of size+1 bytes when the input
// is a file of size bytes (io.ReadAll grows its buffer step by step and
// peaks near twice the input: a 1 GiB request would cost 2 GiB; docs/SPEC.md §4).
// size 0 means unknown.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > 1<<32 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1) // +1: the read that finds the end
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // the file grew: read on as io.ReadAll does
			rest, err := io.ReadAll(r)
			return append(b, rest...), err
		}
	}
}

// overLimitError is an input (a file, a line of one) over the request
// limit: its bytes were counted, not kept.
type overLimitError struct{ size int64 }

func (e overLimitError) Error() string {
	return fmt.Sprintf("it is %s, over the 1 GiB request limit (docs/SPEC.md §4); split it", sizeOf(e.size))
}

// openInput opens path ("" or "-": stdin) for reading; size is the
// file's size when it is a regular file, else 0 (unknown).
func openInput(path string, stdin io.Reader) (r io.Reader, size int64, closeFn func(), err error) {
	if path == "" || path == "-" {
		return stdin, 0, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, func() { f.Close() }, nil
}

// readLimited reads the whole of path ("" or "-": stdin) within limit:
// over it, the bytes are counted and dropped and the error is an
// overLimitError with the input's size.
func readLimited(path string, stdin io.Reader, limit int64) ([]byte, error) {
	r, size, closeFn, err := openInput(path, stdin)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	b, n, err := readRequest(r, size, limit)
	if err == nil && n > limit {
		err = overLimitError{n}
	}
	return b, err
}

// runArgs is the cache subcommand's input made into the cache_report
// arguments. An input over the limit (a request, a usage line) goes as a
// stand-in the core answers with an error, replaced in its answer by the
// input's own verdict (patch): each call keeps its place in the run.
type runArgs struct {
	items     []byte              // the elements of the requests argument, one after another
	n         int                 // how many
	usage     []byte              // the usage argument's elements (nil: none given)
	nUsage    int                 // how many
	callErr   map[int]*core.Error // call i's error, for a request the core is not given
	usageErr  map[int]*core.Error // call i's usage error, for a usage the core is not given
	read      int64               // the bytes read of every input
	tooLarge  bool                // the elements kept are over the limit together
	haveUsage bool
}

// Stand-ins: a request the core answers with an error (an empty side), a
// usage it classes invalid_usage (not a map).
var (
	standInRequest = msgp.AppendString(nil, "")
	standInUsage   = msgp.AppendBool(nil, true)
)

func (a *runArgs) keep(dst *[]byte, b []byte, limit int64) {
	if !a.tooLarge {
		*dst = append(*dst, b...)
		if int64(len(a.items)+len(a.usage)) > limit { // the whole arguments cannot be sent: keep nothing more
			a.tooLarge, a.items, a.usage = true, nil, nil
		}
	}
}

// readRequests reads the run's requests from in: msgpack values one after
// another when its first byte opens a msgpack map or array, else JSON one
// per line (blank lines skipped). Each request over limit is counted to
// its end, not kept, and that call's error says its size.
func (a *runArgs) readRequests(in io.Reader, limit int64) error {
	r := bufio.NewReaderSize(in, 1<<20)
	a.callErr = map[int]*core.Error{}
	c, _ := r.Peek(1)
	isMsgpack := len(c) == 1 && (c[0]&0xe0 == 0x80 || c[0] >= 0xdc && c[0] <= 0xdf)
	for {
		if isMsgpack {
			b, size, err := wirejson.NextMsgpackBounded(r, nil, limit, readCeiling)
			if err == wirejson.ErrEndless {
				size = sizeUnknown
			}
			a.count(size)
			switch err {
			case io.EOF:
				return nil
			case nil:
				a.keep(&a.items, b, limit)
			case wirejson.ErrTooLarge, wirejson.ErrEndless:
				a.callErr[a.n] = tooLargeRequest(size)
				a.keep(&a.items, standInRequest, limit)
			case wirejson.ErrTruncated:
				return fmt.Errorf("the msgpack stream is cut short after %d requests", a.n)
			default:
				return err
			}
			a.n++
			if err == wirejson.ErrEndless || a.pastCeiling() {
				return nil
			}
			continue
		}
		line, size, err := readLine(r, nil, limit)
		a.count(size)
		if err == nil {
			a.count(1) // its newline
		}
		if err != nil && err != io.EOF {
			return err
		}
		switch {
		case size > limit:
			a.callErr[a.n] = tooLargeRequest(size)
			a.keep(&a.items, standInRequest, limit)
			a.n++
		case !blank(line):
			a.keep(&a.items, msgp.AppendStringFromBytes(nil, line), limit)
			a.n++
		}
		if err == io.EOF || a.pastCeiling() {
			return nil
		}
	}
}

// pastCeiling reports that the inputs, read on past the request limit
// together, are past readCeiling: they are read no further (a.read is
// then sizeUnknown), and the report is too_large (a stream of small requests
// without end stops too).
func (a *runArgs) pastCeiling() bool {
	if a.tooLarge && a.read > readCeiling {
		a.read = sizeUnknown
	}
	return a.read == sizeUnknown
}

// count adds size bytes read to a.read (sizeUnknown stays sizeUnknown).
func (a *runArgs) count(size int64) { a.read = min(a.read+size, sizeUnknown) }

// readUsage reads a JSONL file of usage objects, one a line (blank lines
// skipped), each line's JSON as it is (wirejson.ToMsgpack keeps the keys'
// order). A line over limit, or one that is not JSON, is that call's
// invalid usage, saying why; the others are read on.
func (a *runArgs) readUsage(in io.Reader, limit int64) error {
	r := bufio.NewReaderSize(in, 1<<20)
	a.haveUsage, a.usageErr = true, map[int]*core.Error{}
	for lineNo := 1; ; lineNo++ {
		line, size, err := readLine(r, nil, limit)
		a.count(size)
		if err == nil {
			a.count(1)
		}
		if err != nil && err != io.EOF {
			return err
		}
		var v []byte
		isBlank := blank(line)
		switch {
		case size > limit:
			a.usageErr[a.nUsage] = &core.Error{Code: core.CodeTooLarge, Path: "usage", Offset: -1,
				Message: fmt.Sprintf("the usage on line %d of --usage is %s, over the 1 GiB request limit; give the provider's usage object", lineNo, sizeOf(size))}
		case isBlank:
		default:
			// converted in place after the usage kept (keep's append then
			// copies nothing): a usage of 64 MB is held once, not twice
			start := len(a.usage)
			buf, cerr := wirejson.ToMsgpack(a.usage, line)
			line = nil
			if cerr == nil {
				a.usage, v = buf[:start], buf[start:]
			} else {
				a.usageErr[a.nUsage] = &core.Error{Code: core.CodeMalformedRequest, Path: "usage", Offset: -1,
					Message: fmt.Sprintf("line %d of --usage is not JSON (%v); give the provider's usage object as JSON, or null", lineNo, cerr)}
			}
		}
		if size > limit || !isBlank {
			if v == nil {
				v = standInUsage
			}
			a.keep(&a.usage, v, limit)
			a.nUsage++
		}
		if err == io.EOF || a.pastCeiling() {
			return nil
		}
	}
}

func tooLargeRequest(size int64) *core.Error {
	msg := fmt.Sprintf(core.MsgRequestTooLargeFormat, size)
	if size == sizeUnknown {
		msg = fmt.Sprintf(msgRequestEndlessFormat, readCeiling)
	}
	return &core.Error{Code: core.CodeTooLarge, Offset: -1, Message: msg}
}

// args are the cache_report arguments: the requests and the usage, each
// msgpack.
func (a *runArgs) args() (reqs, usage []byte) {
	reqs = append(msgp.AppendArrayHeader(nil, uint32(a.n)), a.items...)
	usage = msgp.AppendNil(nil)
	if a.haveUsage {
		usage = append(msgp.AppendArrayHeader(nil, uint32(a.nUsage)), a.usage...)
	}
	return reqs, usage
}

// patch puts the verdicts of the inputs the core was not given into its
// report: a call's whole entry, or the error of its invalid_usage.
func (a *runArgs) patch(ans []byte) []byte {
	if len(a.callErr) == 0 && len(a.usageErr) == 0 {
		return ans
	}
	dec := json.NewDecoder(bytes.NewReader(ans))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ans
	}
	if tok, err := dec.Token(); err != nil || tok != "calls" {
		return ans // an error answer: nothing to patch
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return ans
	}
	out := make([]byte, 0, len(ans))
	last := 0
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return ans
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		var entry []byte
		if e := a.callErr[i]; e != nil {
			entry = core.AppendCompareError(nil, e)
		} else if e := a.usageErr[i]; e != nil && !bytes.HasPrefix(raw, []byte(`{"error"`)) {
			const mark = `"class":"invalid_usage","error":`
			k := bytes.LastIndex(raw, []byte(mark))
			if k < 0 {
				continue
			}
			ej := core.AppendCompareError(nil, e)
			entry = append(append(append([]byte{}, raw[:k+len(mark)]...), ej[len(`{"error":`):len(ej)-1]...), "}}"...)
		} else {
			continue
		}
		out = append(append(out, ans[last:start]...), entry...)
		last = end
	}
	return append(out, ans[last:]...)
}
