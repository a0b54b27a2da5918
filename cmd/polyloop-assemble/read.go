package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/polyloop/assembly/core"
)

// requestLimit is the most bytes of one request the tool reads into memory
// (docs/SPEC.md §4): a longer request, JSON text or msgpack, is read past,
// not kept, and answered too_large with its size, so memory stays bounded
// whatever the input. Only tests lower it.
var requestLimit int64 = core.MaxRequestBytes

// readRequest reads the whole input as one request. Within limit it
// returns its bytes and n = len(b). Over it, b is nil and n the input's
// size: the file's size, or the bytes read to the end, counted and dropped.
func readRequest(r io.Reader, size, limit int64) (b []byte, n int64, err error) {
	if size > limit { // a regular file: its size is known
		return nil, size, nil
	}
	b, err = readAll(io.LimitReader(r, limit+1), size)
	if err != nil || int64(len(b)) <= limit {
		return b, int64(len(b)), err
	}
	rest, err := io.Copy(io.Discard, r)
	return nil, int64(len(b)) + rest, err
}

// readLine reads the next line of a JSON batch into dst, without its
// newline; n is its length. A line over limit is read to its end but only
// its first bytes are kept (the caller drops them). err is io.EOF when the
// line ends the input without a newline, or when nothing was left (n 0).
func readLine(r *bufio.Reader, dst []byte, limit int64) (line []byte, n int64, err error) {
	for {
		var part []byte
		part, err = r.ReadSlice('\n')
		n += int64(len(part))
		if n <= limit+1 { // +1: the newline
			dst = append(dst, part...)
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
