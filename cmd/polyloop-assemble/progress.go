package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressAfter is how long a batch runs before the progress line appears;
// progressEvery how often it is redrawn.
var (
	progressAfter = 2 * time.Second
	progressEvery = 500 * time.Millisecond
)

// isTerminal reports whether w is a terminal (tests replace it).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// progress draws one line on stderr, redrawn in place, while a long batch
// runs and stderr is a terminal; nothing otherwise.
type progress struct {
	w     io.Writer
	start time.Time
	next  time.Time
	shown bool
}

func newProgress(w io.Writer, start time.Time) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w, start: start, next: start.Add(progressAfter)}
}

func (p *progress) update(n, failed int) {
	if p == nil {
		return
	}
	now := time.Now()
	if now.Before(p.next) {
		return
	}
	p.next = now.Add(progressEvery)
	secs := now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r\x1b[Kpolyloop-assemble: %s requests, %s errors, %.0f s, %s requests/s",
		group(int64(n)), group(int64(failed)), secs, group(int64(float64(n)/max(secs, 1e-9))))
	p.shown = true
}

// done clears the progress line (the summary follows).
func (p *progress) done() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
