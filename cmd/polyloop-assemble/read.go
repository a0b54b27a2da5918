package main

import (
	"errors"
	"io"
)

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
